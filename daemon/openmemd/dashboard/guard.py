"""Who may use the dashboard: pure checks on a request's token, Host and CSRF field.

The token is a per-user secret in the state dir (0600, made once). A page accepts it as
`?token=` (a printed or bookmarked link) and as the session cookie it turns into. The Host
must name the loopback address and port exactly: a page of another site whose name a DNS
rebinding points at 127.0.0.1 sends its own name, and gets 403. A write also needs a CSRF
field, an HMAC of the token, which another site's page cannot read.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from http.cookies import SimpleCookie
from pathlib import Path

TOKEN_FILE = "dashboard.token"
COOKIE = "openmemd_dashboard"
_CSRF_LABEL = b"openmemd dashboard csrf"


def load_token(state_dir: Path) -> str:
    """The user's dashboard token, created once (0600, written whole or not at all)."""
    path = state_dir / TOKEN_FILE
    try:
        token = path.read_text(encoding="ascii").strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    state_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{TOKEN_FILE}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, token.encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # never replaces a token another process wrote meanwhile
    except FileExistsError:
        existing = path.read_text(encoding="ascii").strip()
        if existing:
            return existing
        os.replace(tmp, path)  # an empty file (a crash before the fsync of an old version)
    finally:
        tmp.unlink(missing_ok=True)
    return token


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers a loopback page of ours sends."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def host_ok(host: str | None, port: int) -> bool:
    return host is not None and host.strip().lower() in allowed_hosts(port)


def token_ok(given: str | None, token: str) -> bool:
    """Constant time: the comparison does not leak how much of a guess was right."""
    return bool(given) and hmac.compare_digest(str(given).encode(), token.encode())


def cookie_token(cookie_header: str | None) -> str | None:
    """The token the session cookie holds, if any."""
    if not cookie_header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header)
    except Exception:  # a malformed Cookie header is no cookie, not an error page
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


def session_cookie(token: str) -> str:
    """The Set-Cookie value: unreadable by scripts, never sent by another site's page."""
    return f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"


def csrf_token(token: str) -> str:
    """The hidden field a form that writes carries: derived from the token, so nothing more
    is stored, and a page that has not the token cannot make it."""
    return hmac.new(token.encode(), _CSRF_LABEL, hashlib.sha256).hexdigest()


def csrf_ok(given: str | None, token: str) -> bool:
    return bool(given) and hmac.compare_digest(str(given).encode(), csrf_token(token).encode())
