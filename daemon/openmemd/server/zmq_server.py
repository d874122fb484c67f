"""ZeroMQ front end: a ROUTER socket, one I/O thread, a pool of request worker threads.

The I/O thread owns the ROUTER socket (ZeroMQ sockets are not thread-safe): it splits each
message into the routing envelope and the body, rejects malformed envelopes at once, and puts
the rest on a bounded queue. Workers parse and handle a request and push the reply, with its
envelope, back over an inproc PUSH/PULL pair; the I/O thread sends it out. REQ clients work
unchanged (identity + empty delimiter + body); DEALER clients without the delimiter get their
reply in the same shape. Every request gets exactly one reply; a full queue is answered with
`unavailable` instead of growing without bound.

Long operations (`sync` with wait, `dream`) are handed to a separate small pool, so they never
occupy the request workers that searches need; when all its threads are busy, a further long
operation is answered `unavailable` at once. `ping` and `status` have their own threads too
(the control pool): the I/O thread reads a small message's op and hands these two over
directly, so they never wait behind busy request workers -- and `status` can say that requests
are queuing. Worker threads are supervised (workers.py): one
that dies is replaced and its request answered; a stuck one shows in `problems()`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import zmq

from openmemd.errors import OpenmemdError
from openmemd.log import get_logger
from openmemd.protocol.endpoint import Endpoint, parse_endpoint, prepare_private_dir
from openmemd.protocol.requests import (
    Envelope,
    ProtocolError,
    Request,
    error_reply,
    is_long,
    ok_reply,
    op_name,
    parse_request,
)
from openmemd.server.workers import Slot, WorkerPool

log = get_logger(__name__)

class _Reply(Protocol):
    """A reply record (`protocol.replies`): JSON from here on."""

    def to_json(self) -> dict[str, Any]: ...


Handler = Callable[[Request], _Reply]
_MAX_FRAMES = 16
_POLL_MS = 1000
# Messages up to this size are parsed by the I/O thread to find `ping` and `status` (a few
# microseconds); a larger one is never either of them in practice and goes to the workers.
_PEEK_BYTES = 4096
_CONTROL_OPS = frozenset({"ping", "status"})
_SOCKET_CHECK_S = 10.0
# A short request (search, get, status, ping) running longer than this is stuck: status says
# so and the daemon stops feeding the systemd watchdog. Long operations have their own bound:
# a waiting sync gives up after an hour (AgentRuntime.sync), a dream sweep is bounded by the
# workspace; past this they count as stuck too.
STUCK_REQUEST_S = 300.0
STUCK_LONG_OP_S = 6 * 3600.0
# The I/O loop turns at least once a second; this long without a turn, it is stuck.
IO_STALL_S = 15.0
_ids = itertools.count()


class ServerError(OpenmemdError):
    code = "unavailable"


class ZmqServer:
    def __init__(self, endpoint: str | Endpoint, handler: Handler, *, workers: int = 4,
                 max_message_bytes: int = 1024 * 1024, queue_size: int | None = None,
                 allow_remote: bool = False,
                 context: zmq.Context[zmq.Socket[Any]] | None = None,
                 socket_check_s: float = _SOCKET_CHECK_S, long_workers: int = 2,
                 stuck_after_s: float = STUCK_REQUEST_S,
                 long_stuck_after_s: float = STUCK_LONG_OP_S) -> None:
        self.endpoint = (endpoint if isinstance(endpoint, Endpoint)
                         else parse_endpoint(endpoint, allow_remote=allow_remote))
        self._handler = handler
        self._workers_n = max(1, workers)
        self.max_message_bytes = max_message_bytes
        self._ctx: zmq.Context[zmq.Socket[Any]] = context or zmq.Context.instance()
        self._inproc = f"inproc://openmemd-replies-{os.getpid()}-{next(_ids)}"
        self._pool = WorkerPool("request", self._workers_n, self._work, context=self._ctx,
                                reply_url=self._inproc,
                                queue_size=queue_size or self._workers_n * 32,
                                stuck_after_s=stuck_after_s)
        self._long = WorkerPool("long-op", long_workers, self._work_parsed, context=self._ctx,
                                reply_url=self._inproc, stuck_after_s=long_stuck_after_s,
                                reserve=True)
        self._control = WorkerPool("control", 2, self._work_parsed, context=self._ctx,
                                   reply_url=self._inproc, queue_size=64,
                                   stuck_after_s=stuck_after_s)
        self._pools = (self._pool, self._long, self._control)
        self._stopping = threading.Event()
        self._frontend: zmq.Socket[Any] | None = None
        self._pull: zmq.Socket[Any] | None = None
        self._io_thread: threading.Thread | None = None
        self._inflight = 0
        self._socket_check_s = socket_check_s
        self.requests = 0
        self.errors = 0
        self.rejected = 0
        # Monotonic time of the I/O loop's last turn: the daemon's systemd watchdog checks it.
        self.last_loop = time.monotonic()

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and start the threads. Raises ServerError when the endpoint cannot be bound."""
        self._frontend = self._bind_frontend()
        self._pull = self._ctx.socket(zmq.PULL)
        self._pull.setsockopt(zmq.LINGER, 0)
        self._pull.bind(self._inproc)
        for pool in self._pools:
            pool.start()
        self._io_thread = threading.Thread(target=self._io_loop, name="openmemd-zmq", daemon=True)
        self._io_thread.start()
        log.info("server_listening", endpoint=self.endpoint.url, workers=self._workers_n)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop reading requests, deliver replies already being worked on (up to `timeout`),
        close the sockets and remove the ipc socket file."""
        self._stopping.set()
        self._wake_io_thread()
        deadline = time.monotonic() + timeout
        for pool in self._pools:
            pool.signal_stop(deadline)
        for pool in self._pools:
            pool.join(deadline)
        if self._io_thread is not None:
            self._io_thread.join(max(0.5, deadline - time.monotonic()))
        self._remove_socket_file()

    def _wake_io_thread(self) -> None:
        # A one-frame message on the reply channel: the I/O loop sees the stop flag at once
        # instead of at the end of its poll timeout.
        if self._pull is None:
            return
        wake = self._ctx.socket(zmq.PUSH)
        wake.setsockopt(zmq.LINGER, 100)
        try:
            wake.connect(self._inproc)
            wake.send(b"", zmq.NOBLOCK)
        except zmq.ZMQError:
            pass
        finally:
            wake.close()

    def is_alive(self) -> bool:
        return self._io_thread is not None and self._io_thread.is_alive()

    def threads_done(self) -> bool:
        """True when no server thread still holds a socket (the context may be terminated)."""
        return not self.is_alive() and not any(pool.alive() for pool in self._pools)

    def stalled(self) -> list[str]:
        """Why the server no longer serves (empty when it does): the I/O loop has not turned,
        or a worker is dead or stuck. The daemon feeds the systemd watchdog only when empty."""
        now = time.monotonic()
        return self._loop_problems(now) + [p for pool in self._pools for p in pool.stalled(now)]

    def problems(self) -> list[str]:
        """`stalled()` plus recent worker deaths (replaced) and requests queuing for a worker:
        the lines `status` shows."""
        now = time.monotonic()
        return self._loop_problems(now) + [p for pool in self._pools for p in pool.problems(now)]

    def _loop_problems(self, now: float) -> list[str]:
        if self._io_thread is not None and not self._io_thread.is_alive():
            return ["request loop thread is not running"]
        if now - self.last_loop > IO_STALL_S:
            return [f"request loop has not turned for {now - self.last_loop:.0f}s"]
        return []

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "errors": self.errors, "rejected": self.rejected,
                "queued": self._pool.waiting()[0], "workers": self._workers_n,
                "pools": {"requests": self._pool.stats(), "longOps": self._long.stats(),
                          "control": self._control.stats()},
                "problems": self.problems()}

    # -- sockets --------------------------------------------------------------------------
    def _bind_frontend(self) -> zmq.Socket[Any]:
        ep = self.endpoint
        sock = self._ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        # Hard cap enforced by libzmq (the peer is disconnected); below it, oversized requests
        # get a clear `bad_request` reply from the check in parse_request.
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_message_bytes * 2 + 4096)
        if ep.kind == "tcp" and ep.is_ipv6:
            sock.setsockopt(zmq.IPV6, 1)
        try:
            if ep.ipc_path is not None:
                prepare_private_dir(ep.ipc_path.parent)
                _bind_private(sock, ep.url, ep.ipc_path)
            else:
                sock.bind(ep.url)
        except (zmq.ZMQError, OSError) as exc:
            sock.close(0)
            raise ServerError(f"cannot listen on {ep.url}: {exc}") from exc
        return sock

    def _remove_socket_file(self) -> None:
        path = self.endpoint.ipc_path
        if path is not None and self._frontend is not None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("socket_unlink_failed", path=str(path), error=str(exc))

    def _check_socket_file(self) -> None:
        # A tmp cleaner (systemd-tmpfiles, a user's rm) may delete the socket file while we
        # run; clients could then never connect. Re-create it.
        path = self.endpoint.ipc_path
        if path is None or path.exists() or self._frontend is None:
            return
        log.warning("socket_file_missing_rebinding", path=str(path))
        with contextlib.suppress(zmq.ZMQError):
            self._frontend.unbind(self.endpoint.url)
        try:
            prepare_private_dir(path.parent)
            _bind_private(self._frontend, self.endpoint.url, path)
        except (zmq.ZMQError, OSError) as exc:
            log.error("socket_rebind_failed", path=str(path), error=str(exc))

    # -- I/O thread -----------------------------------------------------------------------
    def _io_loop(self) -> None:
        frontend, pull = self._frontend, self._pull
        assert frontend is not None and pull is not None
        poller = zmq.Poller()
        poller.register(frontend, zmq.POLLIN)
        poller.register(pull, zmq.POLLIN)
        next_check = time.monotonic() + self._socket_check_s
        drain_deadline: float | None = None
        try:
            while True:
                self.last_loop = time.monotonic()
                if self._stopping.is_set():
                    if drain_deadline is None:
                        poller.unregister(frontend)  # stop taking requests
                        drain_deadline = time.monotonic() + 5.0
                    if self._inflight <= 0 or time.monotonic() > drain_deadline:
                        return
                events = dict(poller.poll(100 if drain_deadline else
                                          min(_POLL_MS, int(self._socket_check_s * 1000))))
                if pull in events:
                    self._forward_replies(frontend, pull)
                if frontend in events and drain_deadline is None:
                    self._read_requests(frontend)
                self._supervise(frontend)
                if self.last_loop > next_check:
                    next_check = self.last_loop + self._socket_check_s
                    self._check_socket_file()
        except Exception:
            log.exception("server_io_loop_crashed")
        finally:
            frontend.close(0)
            pull.close(0)

    def _forward_replies(self, frontend: zmq.Socket[Any], pull: zmq.Socket[Any]) -> None:
        for _ in range(1000):
            try:
                frames = pull.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) == 1:  # a wake-up from stop()
                continue
            self._inflight -= 1
            self._send(frontend, frames)

    def _read_requests(self, frontend: zmq.Socket[Any]) -> None:
        for _ in range(1000):
            try:
                frames = frontend.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                return
            self.requests += 1
            envelope, body, problem = split_envelope(frames)
            if problem is not None:
                self.errors += 1
                self._send(frontend, [*envelope, error_reply("bad_request", problem)])
                continue
            pool, payload = self._route(body)
            if pool.submit(envelope, payload):
                self._inflight += 1
            else:
                self.rejected += 1
                self._send(frontend, [*envelope, error_reply(
                    "unavailable", "server busy: too many requests queued; retry shortly")])

    def _route(self, body: bytes) -> tuple[WorkerPool, bytes | Envelope]:
        """The pool a message goes to: `ping` and `status` to the control threads (parsed
        here), everything else, and whatever does not parse, to the request workers."""
        if len(body) > _PEEK_BYTES:
            return self._pool, body
        try:
            env = parse_request(body, max_bytes=self.max_message_bytes)
        except Exception:  # ProtocolError, or worse: the worker parses it again and answers
            return self._pool, body
        return (self._control, env) if op_name(env.request) in _CONTROL_OPS else (self._pool,
                                                                                   body)

    @staticmethod
    def _send(frontend: zmq.Socket[Any], frames: list[bytes]) -> None:
        try:
            frontend.send_multipart(frames, zmq.NOBLOCK)
        except zmq.ZMQError as exc:  # peer gone or its queue full: the reply is dropped
            log.debug("reply_dropped", error=str(exc))

    def _supervise(self, frontend: zmq.Socket[Any]) -> None:
        for pool in self._pools:
            for envelope in pool.supervise():
                self._inflight -= 1
                self.errors += 1
                self._send(frontend, [*envelope, error_reply(
                    "internal", "the request worker handling this request died; retry")])

    # -- workers --------------------------------------------------------------------------
    def _work(self, envelope: list[bytes], body: bytes, slot: Slot) -> bytes | None:
        """A request worker's turn: parse, then answer or hand a long operation on."""
        try:
            env = parse_request(body, max_bytes=self.max_message_bytes)
        except ProtocolError as exc:
            self.errors += 1
            return error_reply(exc.code, exc.message, exc.req_id)
        slot.op = op_name(env.request)
        if not is_long(env.request):
            return self._handle(env)
        if self._long.submit(envelope, env):
            return None  # a long-op thread answers it
        self.rejected += 1
        return error_reply("unavailable", f"busy: {self._long.size} long operations (sync "
                           "with wait, dream) are already running; retry when one finishes",
                           env.id)

    def _work_parsed(self, envelope: list[bytes], env: Envelope, slot: Slot) -> bytes:
        slot.op = op_name(env.request)
        return self._handle(env)

    def _handle(self, env: Envelope) -> bytes:
        """Run the handler; every outcome is a reply. Never raises."""
        try:
            return ok_reply(self._handler(env.request).to_json(), env.id)
        except OpenmemdError as exc:
            self.errors += 1
            return error_reply(exc.code, str(exc), env.id)
        except Exception as exc:
            self.errors += 1
            try:
                log.exception("request_failed", op=op_name(env.request))
            except Exception:  # pragma: no cover - logging must not cost the reply
                pass
            return error_reply("internal", f"internal error: {type(exc).__name__}: {exc}",
                               env.id)


def _bind_private(sock: zmq.Socket[Any], url: str, path: Any) -> None:
    """Bind an ipc socket that is 0600 from its first moment (umask), not only after chmod."""
    old = os.umask(0o077)
    try:
        sock.bind(url)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)


def split_envelope(frames: list[bytes]) -> tuple[list[bytes], bytes, str | None]:
    """ROUTER frames -> (envelope to echo, body, problem or None).

    REQ: [identity, b"", body]. DEALER without delimiter: [identity, body]. Anything with more
    than one body frame is refused: the protocol is one JSON object per message.
    """
    if len(frames) > _MAX_FRAMES:
        return frames[:1], b"", f"message has {len(frames)} frames; send one JSON object"
    try:
        delim = frames.index(b"", 1)
    except ValueError:
        envelope, body_frames = frames[:1], frames[1:]
    else:
        envelope, body_frames = frames[:delim + 1], frames[delim + 1:]
    if not body_frames:
        return envelope, b"", "empty message: send one JSON object"
    if len(body_frames) > 1:
        return envelope, b"", (f"multipart message ({len(body_frames)} parts): send one JSON "
                               "object as a single-part message")
    return envelope, body_frames[0], None
