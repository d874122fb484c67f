"""Endpoints: validation, the ipc socket's directory and the per-endpoint lock file."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import NamedTuple

from openmemd import paths

# sun_path is 108 bytes on Linux and 104 on macOS, including the terminating NUL.
MAX_IPC_PATH = 103 if sys.platform == "darwin" else 107


class EndpointError(ValueError):
    """The endpoint is malformed, too long, or not allowed; the message says how to fix it."""


class Endpoint(NamedTuple):
    """Where a daemon listens: an ipc socket file or a TCP address."""

    url: str
    kind: str  # "ipc" | "tcp"
    ipc_path: Path | None = None
    host: str = ""
    port: str = ""

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.host


def resolve_endpoint(configured: str | None) -> str:
    """The configured endpoint, else $OPENMEMD_ENDPOINT, else the default ipc socket."""
    return configured or os.environ.get("OPENMEMD_ENDPOINT") or paths.default_endpoint()


def parse_endpoint(url: str, *, allow_remote: bool = False) -> Endpoint:
    if url.startswith("ipc://"):
        raw = url[len("ipc://"):]
        if not raw or raw.startswith("@"):
            raise EndpointError(f"{url}: give a filesystem path, e.g. ipc:///tmp/openmemd.sock")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        size = len(os.fsencode(str(path)))
        if size > MAX_IPC_PATH:
            raise EndpointError(f"{url}: the socket path is {size} bytes; unix sockets allow at "
                                f"most {MAX_IPC_PATH}. Use a shorter path (e.g. under /tmp) or "
                                "set XDG_RUNTIME_DIR to a short directory")
        return Endpoint(f"ipc://{path}", "ipc", ipc_path=path)
    if url.startswith("tcp://"):
        rest = url[len("tcp://"):]
        host, sep, port = rest.rpartition(":")
        if not sep or not host or not port or not (port == "*" or port.isdigit()):
            raise EndpointError(f"{url}: expected tcp://HOST:PORT, e.g. tcp://127.0.0.1:7437")
        bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not allow_remote and not _is_loopback(bare):
            raise EndpointError(f"{url}: {bare} is not a loopback address. openmemd serves your "
                                "memory without authentication; set server.allow_remote = true "
                                "only if the network is trusted")
        return Endpoint(url, "tcp", host=bare, port=port)
    raise EndpointError(f"{url}: unsupported endpoint; use ipc:///path/to.sock or "
                        "tcp://127.0.0.1:PORT")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    import ipaddress  # here: a command checking an ipc endpoint does not pay for it

    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def lock_path(endpoint: Endpoint) -> Path:
    """One lock per endpoint: next to an ipc socket, in the runtime dir for tcp."""
    if endpoint.ipc_path is not None:
        return endpoint.ipc_path.with_name(endpoint.ipc_path.name + ".lock")
    import hashlib

    digest = hashlib.sha1(endpoint.url.encode()).hexdigest()[:12]
    return paths.runtime_dir() / f"openmemd-tcp-{digest}.lock"


def prepare_private_dir(directory: Path) -> None:
    """Create the socket/lock directory 0700. An existing directory we own is tightened to 0700
    only when it is openmemd's own runtime dir (never chmod a directory the user chose)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory == paths.runtime_dir():
        # /tmp/openmemd-<uid> could have been planted by another user: refuse to use it.
        st = directory.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise EndpointError(f"{directory} is not a directory owned by you; remove it or set "
                                "server.endpoint")
        if stat.S_IMODE(st.st_mode) != 0o700:
            directory.chmod(0o700)


def write_endpoint_record(state: Path, url: str) -> Path | None:
    """Record in the state dir the endpoint this daemon serves it on (0600, atomic), so a
    client whose environment differs from the service's (no XDG_RUNTIME_DIR, another
    OPENMEMD_ENDPOINT) still finds it. Best effort: a daemon without it still serves."""
    target = paths.endpoint_record(state)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        state.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, f"{url}\n".encode())
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return target
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return None


def remove_endpoint_record(state: Path, url: str) -> None:
    """Remove the record if it is still ours (a newer daemon may have replaced it)."""
    target = paths.endpoint_record(state)
    try:
        if target.read_text(encoding="utf-8").strip() == url:
            target.unlink()
    except (OSError, UnicodeDecodeError):
        pass
