"""The dashboard's HTTP server: stdlib `ThreadingHTTPServer` on 127.0.0.1 (and ::1), in
daemon threads of the daemon. Every request passes `guard` first (Host, then token), every
page is rendered from `pages` with Jinja2 (autoescape on), every response forbids framing,
outside resources and referrers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jinja2

from openmemd.config.locate import DEFAULT_AGENT
from openmemd.dashboard import guard, pages
from openmemd.errors import BadRequestError, NotFoundError, OpenmemdError
from openmemd.log import get_logger
from openmemd.protocol.handler import Handler

log = get_logger(__name__)

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".png": "image/png"}
MAX_BODY_BYTES = 64 * 1024


def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("openmemd.dashboard", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)


def static_file(name: str) -> bytes | None:
    """A file of dashboard/static (no subfolders, no dot files), or None."""
    if "/" in name or name.startswith(".") or Path(name).suffix not in STATIC_TYPES:
        return None
    item = resources.files("openmemd.dashboard").joinpath("static", name)
    return item.read_bytes() if item.is_file() else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    dashboard: Dashboard


class _V6Server(_Server):
    address_family = socket.AF_INET6

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        super().server_bind()


class Dashboard:
    """The dashboard on `port` of 127.0.0.1 (and of ::1 where the machine has it), answering
    from `handler`; its token from `state_dir`."""

    def __init__(self, handler: Handler, port: int, state_dir: Path) -> None:
        self.handler = handler
        self.token = guard.load_token(state_dir)
        self.token_file = state_dir / guard.TOKEN_FILE
        self.env = environment()
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []
        self.port = port
        self._servers.append(self._bind(_Server, "127.0.0.1", port))
        self.port = self._servers[0].server_address[1]  # port 0 in tests: the one it got
        try:
            self._servers.append(self._bind(_V6Server, "::1", self.port))
        except OSError as exc:  # no IPv6 loopback here, or the port is taken there
            log.info("dashboard not on ::1", error=str(exc))

    def _bind(self, kind: type[_Server], host: str, port: int) -> _Server:
        server = kind((host, port), _Request)
        server.dashboard = self
        return server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, name="openmemd-dashboard",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("dashboard serving", url=self.url)

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(5)

    def render(self, page: pages.Page) -> bytes:
        template = self.env.get_template(page.template)
        return template.render(**page.values, csrf=guard.csrf_token(self.token)).encode()


class _Request(BaseHTTPRequestHandler):
    server: _Server
    server_version = "openmemd-dashboard"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("dashboard request", line=format % args)

    # -- the checks every request passes ------------------------------------------------------
    def _admitted(self, given: str | None) -> bool:
        board = self.server.dashboard
        if not guard.host_ok(self.headers.get("Host"), board.port):
            self._plain(HTTPStatus.FORBIDDEN, "forbidden: this dashboard answers only "
                        f"http://127.0.0.1:{board.port}/ (the Host header names another "
                        "site)")
            return False
        if not (guard.token_ok(given, board.token) or guard.token_ok(
                guard.cookie_token(self.headers.get("Cookie")), board.token)):
            self._plain(HTTPStatus.UNAUTHORIZED, "unauthorized: open the link "
                        "`openmemd dashboard` prints (it carries the token)")
            return False
        return True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = dict(parse_qsl(url.query))
        given = params.pop("token", None)
        if not self._admitted(given):
            return
        if given is not None:  # the link's token becomes the cookie; the URL drops it
            rest = urlencode(params)
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain",
                       # one leading slash: `//host` would send the browser elsewhere
                       {"Location": "/" + url.path.lstrip("/") + (f"?{rest}" if rest else ""),
                        "Set-Cookie": guard.session_cookie(self.server.dashboard.token)})
            return
        if url.path.startswith("/static/"):
            body = static_file(url.path.removeprefix("/static/"))
            if body is None:
                self._plain(HTTPStatus.NOT_FOUND, "not found")
            else:
                self._send(HTTPStatus.OK, body, STATIC_TYPES[Path(url.path).suffix])
            return
        view = pages.PAGES.get(url.path)
        if view is None:
            self._plain(HTTPStatus.NOT_FOUND, "not found")
            return
        self._page(lambda: view(self.server.dashboard.handler, params))

    def do_POST(self) -> None:
        """Writes (the Memory page's demote and undo): the cookie and the CSRF field both,
        else 403; then the action through the handler and a 303 back to the page."""
        if not self._admitted(None):
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._plain(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
            return
        form = dict(parse_qsl(self.rfile.read(length).decode("utf-8", "replace")))
        if not guard.csrf_ok(form.get("csrf"), self.server.dashboard.token):
            self._plain(HTTPStatus.FORBIDDEN, "forbidden: the form's CSRF field is missing "
                        "or wrong; reload the page")
            return
        action = pages.ACTIONS.get(urlsplit(self.path).path)
        if action is None:
            self._plain(HTTPStatus.NOT_FOUND, "no such action")
            return
        self._send(HTTPStatus.SEE_OTHER, b"", "text/plain",
                   {"Location": self._act(action, form)})

    def _act(self, action: pages.Action, form: dict[str, str]) -> str:
        """Where the browser goes after `action`: its page, with the outcome or the error as
        a one-line message (the daemon keeps serving either way)."""
        agent = form.get("agent") or DEFAULT_AGENT
        try:
            return action(self.server.dashboard.handler, form)
        except OpenmemdError as exc:
            message = str(exc)
        except Exception as exc:  # a bug: said on the page, logged, the daemon keeps serving
            log.exception("dashboard action failed", path=self.path)
            message = f"{type(exc).__name__}: {exc}"
        first = (message.splitlines() or [""])[0]
        return pages.memory_url(agent, error=first[:pages.MAX_MESSAGE_CHARS])

    # -- answers --------------------------------------------------------------------------------
    def _page(self, view: Callable[[], pages.Page]) -> None:
        board = self.server.dashboard
        try:
            body = board.render(view())
        except (NotFoundError, BadRequestError) as exc:
            code = HTTPStatus.NOT_FOUND if isinstance(exc, NotFoundError) else \
                HTTPStatus.BAD_REQUEST
            self._error_page(code, str(exc))
            return
        except OpenmemdError as exc:
            self._error_page(HTTPStatus.SERVICE_UNAVAILABLE, str(exc))
            return
        except Exception as exc:  # a bug: the page says so, the daemon keeps serving
            log.exception("dashboard page failed", path=self.path)
            self._error_page(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}")
            return
        self._send(HTTPStatus.OK, body, "text/html; charset=utf-8")

    def _error_page(self, code: HTTPStatus, message: str) -> None:
        body = self.server.dashboard.render(pages.Page("error.html", {
            "title": f"{code.value} {code.phrase}", "message": message}))
        self._send(code, body, "text/html; charset=utf-8")

    def _plain(self, code: HTTPStatus, message: str) -> None:
        self._send(code, (message + "\n").encode(), "text/plain; charset=utf-8")

    def _send(self, code: HTTPStatus, body: bytes, kind: str,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in {**SECURITY_HEADERS, **(extra or {}),
                            "Content-Type": kind, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
