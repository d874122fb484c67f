"""Workspace watcher: watchdog events -> indexed paths -> per-path debounce -> a change sink.

One recursive watch on the workspace root (inotify puts one watch on each directory, FSEvents
one stream for the tree). Only paths the index would hold pass (`is_indexed`, normally
`MemoryIndex.is_indexed_path`), and editor scratch files never do. Upserts and removals of a
path within the debounce window coalesce to the last one, so vim's rename-write-delete save
and a burst of writes become one upsert.

If the native observer cannot start (inotify watch or instance limit) or dies later, the watcher
falls back to watchdog's PollingObserver ("degraded (polling)"); a directory inotify cannot
watch is polled beside it ("degraded (polling <dirs>)"). A reconcile is requested at once
whenever events may have been missed (queue overflow, watch failure; see watch_limits.py).
"""

from __future__ import annotations

import fnmatch
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver

from openmemd.log import get_logger
from openmemd.protocol.status import RUNNING, WatchStatus
from openmemd.server.debounce import Debouncer
from openmemd.server.util import iso
from openmemd.server.watch_limits import (
    OverflowTap,
    SubtreePoller,
    UnwatchedConfirmer,
    native_observer,
    polled_state,
    polling_observer,
    start_observer,
    stop_observer,
)

log = get_logger(__name__)

# Editor and tool scratch files: vim swap/backup/probe files, emacs lock and backup files,
# and dot-prefixed temp files that atomic savers rename into place.
IGNORED_NAMES = ("*.swp", "*.swx", "*.swo", "*~", ".#*", "#*#", "4913", ".*.tmp", "*.tmp",
                 ".~lock.*")
# Events we act on. Filtering here also keeps inotify from reporting opens and reads, which
# the indexer itself causes on every file it reads.
EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]
_RECONCILE_KEY = "\0reconcile"
# Probe names used to ask the predicate whether a directory may hold indexed files.
_PROBES = ("probe.md", "probe.jsonl")

STATE_STOPPED = "stopped"
STATE_RUNNING = RUNNING  # status shows it with the backend: `running (inotify)`
STATE_POLLING = "degraded (polling)"
STATE_POLLING_CONFIGURED = "running (polling)"
STATE_FAILED = "failed"


@dataclass(frozen=True)
class Change:
    """A debounced change: `path` is workspace-relative (POSIX); `removed` the last event kind."""

    path: str
    removed: bool


class ChangeSink(Protocol):
    def submit(self, changes: Sequence[Change]) -> None: ...
    def request_reconcile(self, reason: str) -> None: ...


def is_editor_temp(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in IGNORED_NAMES)


class Watcher:
    def __init__(self, root: str | os.PathLike[str], is_indexed: Callable[[str], bool],
                 sink: ChangeSink, *, debounce_ms: int = 1500, force_polling: bool = False,
                 polling_interval: float = 2.0, name: str = "main",
                 max_pending: int = 10_000) -> None:
        self.root = Path(root)
        self._roots = _root_prefixes(self.root)
        self._is_indexed = is_indexed
        self._sink = sink
        self._force_polling = force_polling  # configured: polling is then not "degraded"
        self._polling_interval = polling_interval
        self._name = name
        self._lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._state = STATE_STOPPED
        self._backend = ""
        self._error = ""
        self._stopping = False
        self._events = 0
        self._last_event: float | None = None
        self._restarts = 0
        self._overflows, self._debounce_overflows = 0, 0  # kernel queue (IN_Q_OVERFLOW), ours
        self._last_overflow: float | None = None
        self._watch_failures = 0  # directories inotify could not watch
        self._subtrees = SubtreePoller(name, polling_interval)
        self._cover_lock, self._unwatched = threading.Lock(), UnwatchedConfirmer()
        self._debouncer = Debouncer(debounce_ms / 1000, self._flush, max_pending=max_pending,
                                    on_overflow=self._on_debounce_overflow, name=f"watch-{name}")

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching; never raises (a watcher that cannot run leaves state "failed")."""
        with self._lock:
            self._stopping = False
            self._debouncer.start()
            self._start_observer_locked(polling=self._force_polling)
        OverflowTap.get().register(id(self), lambda: getattr(self._observer, "_inotify_fd", None),
                                   self._on_queue_overflow)
        self._cover(str(self.root))

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stopping = True
            observer, self._observer = self._observer, None
            self._state = STATE_STOPPED
        OverflowTap.get().unregister(id(self))
        self._subtrees.stop(timeout)
        if observer is not None:
            stop_observer(observer, timeout)
        # Pending changes are dropped: the next start-up reconcile sees them.
        self._debouncer.stop(flush=False, timeout=timeout)

    def check(self) -> bool:
        """Restart a dead observer (as a PollingObserver). Returns True when it restarted.

        Called periodically by the daemon; cheap when all is well. Also polls directories
        inotify stopped watching (a rebuild after an overflow can hit the watch limit).
        """
        self._subtrees.prune(lambda rel: (self.root / rel).is_dir())
        with self._lock:
            alive = self._stopping or self._alive_locked()
        if alive and self._unwatched.full_look_due(time.monotonic()):
            self._cover(str(self.root))
        with self._lock:
            if self._stopping or self._alive_locked():
                return False
            if self._state == STATE_FAILED and not self.root.is_dir():
                return False
            old, self._observer = self._observer, None
            log.warning("watcher_dead_restarting", agent=self._name, backend=self._backend,
                        state=self._state)
        if old is not None:
            stop_observer(old, 2.0)
        self._subtrees.stop(2.0)  # the whole tree is polled now
        with self._lock:
            if self._stopping:
                return False
            self._restarts += 1
            self._start_observer_locked(polling=True)
            started = self._state != STATE_FAILED
        if started:
            self._sink.request_reconcile("watcher restarted")
        return started

    def set_debounce(self, debounce_ms: int) -> None:
        self._debouncer.set_delay(debounce_ms / 1000)

    @property
    def state(self) -> str:
        with self._lock:
            if self._state != STATE_STOPPED and self._state != STATE_FAILED \
                    and not self._alive_locked():
                return STATE_FAILED
            state = self._state
        polled = self._subtrees.paths()
        return polled_state(polled) if state == STATE_RUNNING and polled else state

    def status(self) -> WatchStatus:
        return WatchStatus(
            state=self.state, backend=self._backend, error=self._error or None,
            pending=self._debouncer.pending(), events=self._events,
            last_event=iso(self._last_event), restarts=self._restarts,
            debounce_ms=round(self._debouncer.delay * 1000), overflows=self._overflows,
            last_overflow=iso(self._last_overflow), debounce_overflows=self._debounce_overflows,
            watch_failures=self._watch_failures, polling_subtrees=tuple(self._subtrees.paths()))

    # -- missed events ----------------------------------------------------------------------
    def _on_queue_overflow(self) -> None:
        """The kernel dropped events: only a full scan can tell what changed."""
        self._overflows, self._last_overflow = self._overflows + 1, time.time()
        log.warning("watcher_queue_overflow", agent=self._name, overflows=self._overflows,
                    hint="raise fs.inotify.max_queued_events")
        self._unwatched.want_full_look()  # events of new directories may be lost too
        self._sink.request_reconcile("inotify queue overflow")

    def _on_debounce_overflow(self) -> None:
        self._debounce_overflows += 1
        self._sink.request_reconcile("debounce overflow")

    def _cover(self, abs_dir: str) -> None:
        """Poll the directories under `abs_dir` that inotify does not watch (watch limit)."""
        rel = self._relative(abs_dir)
        if self._backend != "inotify" or self._stopping or rel is None \
                or not self._may_contain(rel):
            return
        with self._cover_lock:
            missing = self._unwatched.look(str(self.root), abs_dir, self._may_contain,
                                           self._relative)
            added = [r for r in missing
                     if self._subtrees.add(r, str(self.root / r), _Handler(self), EVENT_FILTER)]
        if not added:
            return
        self._watch_failures += len(added)
        log.warning("watcher_watch_failed_polling", agent=self._name, paths=added[:10],
                    count=len(added), interval=self._polling_interval,
                    hint="raise fs.inotify.max_user_watches")
        # Files written before the poller's first snapshot are only found by a scan.
        self._sink.request_reconcile("watch limit: polling " + ", ".join(added[:3]))

    # -- observer management --------------------------------------------------------------
    def _alive_locked(self) -> bool:
        obs = self._observer
        return obs is not None and obs.is_alive() and all(e.is_alive() for e in obs.emitters) \
            and self._subtrees.alive()

    def _start_observer_locked(self, *, polling: bool) -> None:
        polling_wanted = self._force_polling
        if not self.root.is_dir():
            self._state, self._error = STATE_FAILED, f"workspace {self.root} does not exist"
            log.error("watcher_failed", agent=self._name, error=self._error)
            return
        if not polling:
            try:
                self._observer = native_observer(self._name, _Handler(self), str(self.root),
                                                 EVENT_FILTER)
                self._backend = type(self._observer).__name__.replace("Observer", "").lower()
                self._state, self._error = STATE_RUNNING, ""
                log.info("watcher_started", agent=self._name, root=str(self.root),
                         backend=self._backend)
                return
            except Exception as exc:  # OSError(ENOSPC/EMFILE) from inotify limits, mostly
                self._error = f"native watcher failed: {exc}"
                log.warning("watcher_native_failed", agent=self._name, error=str(exc),
                            hint="raise fs.inotify.max_user_watches / max_user_instances")
        try:
            self._observer = start_observer(polling_observer(self._polling_interval), self._name,
                                            _Handler(self), str(self.root), EVENT_FILTER)
            self._backend = "polling"
            self._state = STATE_POLLING_CONFIGURED if polling_wanted else STATE_POLLING
            log.warning("watcher_polling", agent=self._name, root=str(self.root),
                        interval=self._polling_interval)
        except Exception as exc:
            self._observer = None
            self._state, self._error = STATE_FAILED, f"polling watcher failed: {exc}"
            log.error("watcher_failed", agent=self._name, error=self._error)

    # -- event handling (observer thread) -------------------------------------------------
    def _on_event(self, event: FileSystemEvent) -> None:
        self._events += 1
        self._last_event = time.time()
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        if isinstance(event, DirMovedEvent):
            if dest:
                self._dir_moved(src, dest)
                self._cover(dest)
            else:  # moved out of the tree (full-events observers): like a deletion
                self._dir_removed(src)
        elif isinstance(event, DirCreatedEvent):
            self._walk(src, lambda rel: self._touch(rel, removed=False))
            # watchdog has tried to watch it by now, and says nothing if that failed
            self._cover(src)
        elif isinstance(event, DirDeletedEvent):
            self._dir_removed(src)
        elif isinstance(event, FileMovedEvent):
            if src:
                self._file(src, removed=True)
            if dest:
                self._file(dest, removed=False)
        elif isinstance(event, FileDeletedEvent):
            self._file(src, removed=True)
        elif isinstance(event, (FileCreatedEvent, FileModifiedEvent, FileClosedEvent)):
            self._file(src, removed=False)

    def _file(self, abs_path: str, *, removed: bool) -> None:
        rel = self._relative(abs_path)
        if rel is None or is_editor_temp(rel.rsplit("/", 1)[-1]):
            return
        if self._is_indexed(rel):
            self._touch(rel, removed=removed)

    def _touch(self, rel: str, *, removed: bool) -> None:
        self._debouncer.touch(rel, removed)

    def _dir_moved(self, src: str, dest: str) -> None:
        # Every file now under `dest` was under `src` a moment ago: upsert the new path and
        # remove the old one, which is exact and needs no list of what was indexed.
        src_rel = self._relative(src)

        def moved(rel_dest: str) -> None:
            self._touch(rel_dest, removed=False)
            if src_rel is not None:
                dest_rel = self._relative(dest) or ""
                old = src_rel + rel_dest[len(dest_rel):]
                if self._is_indexed(old):
                    self._touch(old, removed=True)

        self._walk(dest, moved)

    def _dir_removed(self, src: str) -> None:
        # Files deleted one by one (rm -r) arrive as their own events; a directory moved out of
        # the workspace arrives only as this event, with nothing to list, so reconcile.
        rel = self._relative(src)
        if rel is not None and self._may_contain(rel):
            self._debouncer.touch(_RECONCILE_KEY, f"directory {rel} removed")

    def _walk(self, abs_dir: str, visit: Callable[[str], None]) -> None:
        base = self._relative(abs_dir)
        if base is None or not self._may_contain(base):
            return
        for dirpath, dirnames, filenames in os.walk(abs_dir):
            rel_dir = self._relative(dirpath)
            if rel_dir is None:
                continue
            dirnames[:] = [d for d in dirnames
                           if self._may_contain(f"{rel_dir}/{d}" if rel_dir else d)]
            for fname in filenames:
                if is_editor_temp(fname):
                    continue
                rel = f"{rel_dir}/{fname}" if rel_dir else fname
                if self._is_indexed(rel):
                    visit(rel)

    def _may_contain(self, rel_dir: str) -> bool:
        if not rel_dir:
            return True
        return any(self._is_indexed(f"{rel_dir}/{probe}") for probe in _PROBES) or any(
            self._is_indexed(f"{rel_dir}/sub/{probe}") for probe in _PROBES)

    def _relative(self, abs_path: str) -> str | None:
        for prefix in self._roots:
            if abs_path == prefix[:-1]:
                return ""
            if abs_path.startswith(prefix):
                return abs_path[len(prefix):].replace(os.sep, "/")
        return None

    # -- debouncer output (timer thread) ---------------------------------------------------
    def _flush(self, items: list[tuple[str, Any]]) -> None:
        changes = [Change(path, bool(removed)) for path, removed in items
                   if path != _RECONCILE_KEY]
        if changes:
            self._sink.submit(changes)
        for path, reason in items:
            if path == _RECONCILE_KEY:
                self._sink.request_reconcile(str(reason))


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self._watcher._on_event(event)
        except Exception:  # an exception here would kill the observer thread
            log.exception("watcher_event_failed", event=repr(event))


def _root_prefixes(root: Path) -> list[str]:
    """The root as given and resolved (macOS reports /private/var for /var)."""
    prefixes = []
    for p in (os.path.abspath(root), os.path.realpath(root)):
        prefix = p.rstrip(os.sep) + os.sep
        if prefix not in prefixes:
            prefixes.append(prefix)
    return prefixes

