"""The dashboard's checks as pure functions: token file, Host, token, cookie, CSRF."""

import os
import stat
import threading

from openmemd.dashboard import guard


def test_token_is_made_once_private_and_kept(tmp_path):
    token = guard.load_token(tmp_path / "state")
    path = tmp_path / "state" / guard.TOKEN_FILE
    assert len(token) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert guard.load_token(tmp_path / "state") == token  # a restart keeps old links working
    assert [p.name for p in (tmp_path / "state").iterdir()] == [guard.TOKEN_FILE]  # no tmp left


def test_racing_first_starts_agree_on_one_token(tmp_path):
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(guard.load_token(tmp_path)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1
    assert (tmp_path / guard.TOKEN_FILE).read_text().strip() == got[0]


def test_an_empty_token_file_gets_a_token(tmp_path):
    (tmp_path / guard.TOKEN_FILE).write_text("")
    os.chmod(tmp_path / guard.TOKEN_FILE, 0o600)
    assert guard.load_token(tmp_path) == (tmp_path / guard.TOKEN_FILE).read_text().strip() != ""


def test_host_must_be_loopback_with_the_port():
    for host in ("127.0.0.1:7743", "localhost:7743", "[::1]:7743", "LOCALHOST:7743"):
        assert guard.host_ok(host, 7743), host
    for host in (None, "", "127.0.0.1", "127.0.0.1:7744", "evil.example:7743",
                 "attacker.com", "127.0.0.1.nip.io:7743", "0.0.0.0:7743", "[::1]"):
        assert not guard.host_ok(host, 7743), host


def test_token_and_cookie():
    token = "s3cret-token"
    assert guard.token_ok(token, token)
    assert not guard.token_ok(None, token)
    assert not guard.token_ok("", token)
    assert not guard.token_ok("s3cret-toke", token)
    cookie = guard.session_cookie(token)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    sent = cookie.split(";")[0]
    assert guard.cookie_token(f"other=1; {sent}") == token
    assert guard.cookie_token("other=1") is None
    assert guard.cookie_token(None) is None
    assert guard.cookie_token('bad"cookie;;=') is None


def test_csrf_is_derived_from_the_token():
    token = "s3cret-token"
    field = guard.csrf_token(token)
    assert field != token and token not in field
    assert guard.csrf_ok(field, token)
    assert not guard.csrf_ok(None, token)
    assert not guard.csrf_ok("", token)
    assert not guard.csrf_ok(guard.csrf_token("another-token"), token)
