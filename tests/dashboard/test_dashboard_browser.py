"""The dashboard of a real daemon, in a real headless Chromium (Debian's `chromium`): each
view loads with the token, a search shows hits, a hit opens its note at the cited lines; and
the security rules over plain HTTP: no token 401, a foreign Host 403, a POST without the
CSRF field 403, listening on loopback only.

A search is typed into the box as keystrokes (DevTools protocol over a pipe, cdp_pipe.py). Set
OPENMEMD_DASHBOARD_SCREENSHOTS=docs to refresh the screenshots in docs/."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from daemon_harness import Daemon, make_daemon
from helpers import wait_for

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOTE = "memory/2026-01-02.md"
NOTE_TEXT = ("# Friday\n\n- Lunch with Ana.\n- The zebra at the zoo is called Zora; she was "
             "born in March.\n- Bought <b>bread</b> & milk.\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def board() -> Iterator[tuple[Daemon, str]]:
    """A daemon with a dashboard and one searchable note; its link as `openmemd dashboard`
    prints it."""
    gen = make_daemon()
    d = next(gen)
    (d.workspace / "MEMORY.md").write_text("# Memory\n\n- Ana likes green tea.\n")
    (d.workspace / NOTE).write_text(NOTE_TEXT)
    d.env["OPENMEMD_DASHBOARD_PORT"] = str(free_port())
    d.start()
    with d.client() as c:
        assert wait_for(lambda: bool(c.search("zebra", min_score=0.0)["results"]), 30)
    out = d.cli("dashboard", "--no-open")
    assert out.returncode == 0, out.stderr
    yield d, out.stdout.strip()
    assert d.stop() == 0
    gen.close()


def chromium(url: str, *extra: str, timeout: float = 60) -> str:
    if CHROMIUM is None:
        if os.environ.get("OPENMEMD_REQUIRE_CHROMIUM"):  # .ci/run: installed, so required
            pytest.fail("chromium is not installed")
        pytest.skip("chromium is not installed (.ci/run installs it)")
    with tempfile.TemporaryDirectory(prefix="omechrome") as profile:
        out = subprocess.run(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", f"--user-data-dir={profile}",
             "--virtual-time-budget=3000", *extra, url],
            capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def page(link: str, path: str, name: str | None = None) -> str:
    """The DOM Chromium shows for `path` opened with the token (which it trades for the
    cookie); with `name`, a screenshot of it as well."""
    base = link.split("?", 1)[0].rstrip("/")
    path_part, _, fragment = path.partition("#")
    joiner = "&" if "?" in path_part else "?"
    url = f"{base}{path_part}{joiner}token={link.split('token=', 1)[1]}" + \
        (f"#{fragment}" if fragment else "")
    if name is not None:
        screenshot(url, name)
    return chromium(url, "--dump-dom")


def screenshot(url: str, name: str) -> None:
    target = Path(os.environ.get("OPENMEMD_DASHBOARD_SCREENSHOTS") or tempfile.gettempdir())
    shot = target / f"dashboard-{name}.png"
    chromium(url, f"--screenshot={shot}", "--window-size=1100,800", "--hide-scrollbars")
    assert shot.stat().st_size > 5000


def test_openmemd_dashboard_prints_the_link(board):
    d, link = board
    url = urlsplit(link)
    assert url.scheme == "http" and url.hostname == "127.0.0.1"
    assert url.port == int(d.env["OPENMEMD_DASHBOARD_PORT"])
    token = (d.root / "state" / "dashboard.token").read_text().strip()
    assert url.query == f"token={token}"
    assert oct((d.root / "state" / "dashboard.token").stat().st_mode & 0o777) == "0o600"


def test_status_page(board):
    _d, link = board
    dom = page(link, "/", "status")
    assert "<h1>Status" in dom
    assert re.search(r"files indexed</th><td>2<", dom), dom
    assert "Sources" in dom and "Connected agents" in dom and "Skipped files" in dom


def test_search_shows_hits_with_the_focus_marked(board):
    _d, link = board
    dom = page(link, "/search?q=" + quote("what is the zebra called"), "search")
    assert 'class="hit"' in dom
    assert "2026-01-02.md" in dom
    focus = re.findall(r'<span class="line focus"><span class="n">(\d+)</span>([^<]*)', dom)
    assert any("Zora" in text for _n, text in focus), dom
    assert "<details><summary>explain</summary>" in dom


def test_a_hit_opens_its_note_at_the_cited_lines(board):
    _d, link = board
    dom = page(link, "/search?q=zebra")
    href = re.search(r'<a class="hitlink" href="([^"]+)"', dom)
    assert href is not None, dom
    target = href.group(1).replace("&amp;", "&")
    assert target.startswith("/note?path=memory%2F2026-01-02.md&lines=") and "#L" in target
    note = page(link, target, "note")
    cited = re.findall(r'<span id="L(\d+)" class="line cited"><span class="n">\d+</span>'
                       r"([^<]*)", note)
    lines = re.search(r"lines=(\d+)-(\d+)#L\1-L\2$", target)
    assert lines is not None, target
    lo, hi = int(lines.group(1)), int(lines.group(2))
    assert [int(n) for n, _t in cited] == list(range(lo, hi + 1)), note
    assert any("Zora" in text for _n, text in cited)
    assert f'<a id="L{lo}-L{hi}"></a><span id="L{lo}"' in note  # where #L4-L5 scrolls
    assert "&lt;b&gt;bread&lt;/b&gt; &amp; milk" in note  # the note's text, escaped


def test_memory_and_dreams_pages_load_with_nothing_promoted(board):
    """(With a promotion, and their screenshots: test_dashboard_memory.py.)"""
    _d, link = board
    memory = page(link, "/memory")
    assert "Ana likes green tea." in memory and "of 20000 characters" in memory
    assert 'class="entry promoted"' not in memory
    dreams = page(link, "/dreams")
    assert "<h1>Dreams</h1>" in dreams and "Nothing would be promoted tonight." in dreams


def test_nothing_found_says_so(board):
    _d, link = board
    dom = page(link, "/search?q=" + quote("xylophone quasar"))
    assert "Nothing passed the minimum score" in dom and 'class="hit"' not in dom


def test_a_bad_note_path_is_a_page_not_a_crash(board):
    d, link = board
    dom = page(link, "/note?path=" + quote("../../etc/passwd"))
    assert "root:" not in dom and '<p class="error">' in dom
    assert d.proc is not None and d.proc.poll() is None


# -- the security rules, over plain HTTP -----------------------------------------------------

def request(d: Daemon, method: str, path: str, *, host: str | None = None,
            headers: dict[str, str] | None = None,
            body: str | None = None) -> http.client.HTTPResponse:
    port = int(d.env["OPENMEMD_DASHBOARD_PORT"])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{port}")
    for name, value in (headers or {}).items():
        conn.putheader(name, value)
    data = body.encode() if body is not None else None
    if data is not None:
        conn.putheader("Content-Type", "application/x-www-form-urlencoded")
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def token_of(link: str) -> str:
    return link.split("token=", 1)[1]


def test_no_token_is_401_and_a_wrong_one_too(board):
    d, _link = board
    for path in ("/", "/search?q=zebra", f"/note?path={quote(NOTE)}", "/static/style.css",
                 "/?token=wrong", "/?token="):
        assert request(d, "GET", path).status == 401, path
    assert request(d, "GET", "/", headers={"Cookie": "openmemd_dashboard=wrong"}).status == 401


def test_the_token_becomes_a_strict_httponly_cookie(board):
    d, link = board
    response = request(d, "GET", f"/search?q=zebra&token={token_of(link)}")
    assert response.status == 303
    assert response.getheader("Location") == "/search?q=zebra"
    elsewhere = request(d, "GET", f"//evil.example/?token={token_of(link)}")
    assert elsewhere.getheader("Location") == "/evil.example/"  # never another site
    cookie = response.getheader("Set-Cookie") or ""
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    ok = request(d, "GET", "/search?q=zebra", headers={"Cookie": cookie.split(";")[0]})
    assert ok.status == 200
    assert ok.getheader("Content-Security-Policy", "").startswith("default-src 'self'")
    assert ok.getheader("X-Frame-Options") == "DENY"
    assert ok.getheader("Referrer-Policy") == "no-referrer"


def test_a_foreign_host_is_403_even_with_the_token(board):
    d, link = board
    port = int(d.env["OPENMEMD_DASHBOARD_PORT"])
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}",
                 f"192.168.1.5:{port}"):
        assert request(d, "GET", f"/?token={token_of(link)}", host=host).status == 403, host
    for host in (f"localhost:{port}", f"[::1]:{port}"):
        assert request(d, "GET", f"/?token={token_of(link)}", host=host).status == 303, host


def test_a_post_needs_the_csrf_field(board):
    d, link = board
    cookie = f"openmemd_dashboard={token_of(link)}"
    # a cross-site form: SameSite=Strict keeps the cookie home, so no token at all
    assert request(d, "POST", "/", body="x=1",
                   headers={"Origin": "http://evil.example"}).status == 401
    assert request(d, "POST", "/", body="x=1", headers={"Cookie": cookie}).status == 403
    assert request(d, "POST", "/", body="csrf=forged",
                   headers={"Cookie": cookie}).status == 403
    from openmemd.dashboard.guard import csrf_token

    # the right field passes the check; `/` is no action: 404
    assert request(d, "POST", "/", body=f"csrf={csrf_token(token_of(link))}",
                   headers={"Cookie": cookie}).status == 404


def test_it_listens_on_loopback_only(board):
    d, _link = board
    port = int(d.env["OPENMEMD_DASHBOARD_PORT"])
    addresses = listening(port)
    assert addresses, "nothing listens on the dashboard's port"
    assert addresses <= {"127.0.0.1", "::1"}, addresses
    assert "127.0.0.1" in addresses


def listening(port: int) -> set[str]:
    """The local addresses of sockets listening on `port` (/proc/net/tcp, tcp6)."""
    found = set()
    for name, width in (("tcp", 8), ("tcp6", 32)):
        table = Path(f"/proc/net/{name}")
        if not table.exists():
            continue
        for row in table.read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port and len(address) == width:
                found.add(_address(address))
    return found


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def test_the_command_says_when_no_daemon_runs(tmp_path):
    gen = make_daemon()
    d = next(gen)
    try:
        out = d.cli("dashboard", "--no-open")
        assert out.returncode == 1
        assert out.stderr.count("\n") == 1 and "no daemon is running" in out.stderr
        assert out.stdout == ""
    finally:
        gen.close()


def test_a_search_typed_into_the_box_shows_hits(board):
    from cdp_pipe import Browser

    if CHROMIUM is None:
        chromium("about:blank")  # fails under .ci/run, skips elsewhere
    _d, link = board
    browser = Browser(str(CHROMIUM))
    try:
        browser.goto(link)  # the token becomes the cookie; the Status page
        browser.evaluate("document.querySelector('nav input[name=q]').focus()")
        browser.type("what is the zebra called")
        browser.wait_for("location.pathname === '/search' && document.readyState === 'complete'")
        hits = browser.evaluate("[...document.querySelectorAll('.hit')].map(h => h.innerText)")
    finally:
        browser.close()
    assert hits and any("Zora" in hit for hit in hits), hits
