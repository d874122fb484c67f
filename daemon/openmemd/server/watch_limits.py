"""What the native watcher misses: kernel queue overflows and directories it could not watch.

Overflow: watchdog (7.1+) reads inotify's IN_Q_OVERFLOW, logs "Inotify queue overflowed" from
its inotify thread and rebuilds its watches, but hands no event to the handler. That warning is
its only public trace, so `OverflowTap` (a logging handler) turns it into a call on the watcher
whose observer owns that thread. (Older watchdog drops IN_Q_OVERFLOW unseen; the periodic
reconcile is then the only net.)

Watch limit: a subdirectory watchdog cannot watch (fs.inotify.max_user_watches exhausted) when
it appears later is skipped with at most a log line. At start, watchdog 7.1.0 skips it too, but
7.1.1 raises ENOSPC for the whole recursive watch (watchdog #1454): then `watch_what_fits`
watches the tree piece by piece, as far as the limit allows. Either way the kernel's own list
(/proc/self/fdinfo of the inotify descriptors) says which directories are really watched, and
`SubtreePoller` polls the ones that are not.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserverVFS

from openmemd.log import get_logger

log = get_logger(__name__)

WATCHDOG_INOTIFY_LOGGER = "watchdog.observers.inotify_c"
_FDINFO_INO = re.compile(r"^inotify wd:\S+ ino:([0-9a-fA-F]+)", re.MULTILINE)


class OverflowTap(logging.Handler):
    """Routes watchdog's queue-overflow warning to the watcher that owns the inotify thread."""

    _instance: OverflowTap | None = None
    _install_lock = threading.Lock()

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._targets: dict[int, tuple[Callable[[], Any], Callable[[], None]]] = {}
        self._targets_lock = threading.Lock()

    @classmethod
    def get(cls) -> OverflowTap:
        with cls._install_lock:
            if cls._instance is None:
                cls._instance = cls()
                logger = logging.getLogger(WATCHDOG_INOTIFY_LOGGER)
                # Our log set-up quiets "watchdog" to WARNING; pin this one so a stricter
                # level there can never hide the overflow from us.
                logger.setLevel(logging.WARNING)
                logger.addHandler(cls._instance)
            return cls._instance

    def register(self, key: int, owner: Callable[[], Any], on_overflow: Callable[[], None]
                 ) -> None:
        """`owner()` returns the thread that reads this watcher's inotify descriptor."""
        with self._targets_lock:
            self._targets[key] = (owner, on_overflow)

    def unregister(self, key: int) -> None:
        with self._targets_lock:
            self._targets.pop(key, None)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "queue overflow" not in record.getMessage().lower():
                return
            thread = threading.current_thread()
            with self._targets_lock:
                targets = list(self._targets.values())
            mine = [cb for owner, cb in targets if owner() is thread]
            # Thread unknown (another watchdog layout): an extra reconcile everywhere is
            # cheap, a missed one is not.
            for callback in mine or [cb for _, cb in targets]:
                callback()
        except Exception:  # a logging handler must never raise into watchdog's thread
            self.handleError(record)


def watched_inodes() -> set[int] | None:
    """Inodes watched by this process's inotify descriptors; None where /proc cannot tell."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    inodes: set[int] = set()
    found = False
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                text = fh.read()
        except OSError:
            continue
        found = True
        inodes.update(int(m, 16) for m in _FDINFO_INO.findall(text))
    return inodes if found else None


def unwatched_dirs(root: str, start: str, may_contain: Callable[[str], bool],
                   relative: Callable[[str], str | None]) -> list[str] | None:
    """Top-most directories under `start` (absolute) that may hold indexed files and have no
    inotify watch, as workspace-relative paths; None when the kernel's list is unusable."""
    watched = watched_inodes()
    try:
        if watched is None or os.stat(root).st_ino not in watched:
            return None  # not inotify, or inode numbers that do not match the kernel's
    except OSError:
        return None
    rel_start = relative(start)
    if rel_start is None:
        return []
    if rel_start:  # a directory that appeared after start-up: is it watched itself?
        try:
            info = os.stat(start, follow_symlinks=False)
        except OSError:
            return []
        if stat.S_ISLNK(info.st_mode):
            return []  # see below
        if info.st_ino not in watched:
            return [rel_start] if may_contain(rel_start) else []
    missing: list[str] = []
    for dirpath, dirnames, _ in os.walk(start):
        rel_dir = relative(dirpath)
        if rel_dir is None:
            dirnames[:] = []
            continue
        keep = []
        for d in dirnames:
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if not may_contain(rel):
                continue
            try:
                info = os.stat(os.path.join(dirpath, d), follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                # A symlinked folder is never followed (DESIGN): inotify rightly has no watch
                # on it, and polling it would read what it points at, perhaps outside the
                # workspace. Its target inside the workspace is watched under its own path.
                continue
            if info.st_ino in watched:
                keep.append(d)
            else:
                missing.append(rel)  # its whole subtree is polled: no need to look inside
        dirnames[:] = keep
    return missing


# Watches `watch_what_fits` schedules at most: each is an emitter thread of watchdog's.
MAX_PIECES = 64


def watch_what_fits(observer: BaseObserver, handler: FileSystemEventHandler, root: str,
                    event_filter: list[type[FileSystemEvent]]) -> int:
    """Watch `root`'s tree on a started inotify `observer` as far as the watch limit allows,
    for a watchdog that refuses a recursive watch it cannot complete: a directory whose whole
    tree fits gets one recursive watch; one whose tree does not is watched alone and its
    subdirectories are tried in turn, breadth first, until a directory alone no longer fits (or
    MAX_PIECES watches). Symlinked folders are never followed. Returns the watches scheduled;
    raises ENOSPC when not even `root` alone can be watched."""
    pieces = 0
    queue = deque([root])
    while queue and pieces < MAX_PIECES:
        path = queue.popleft()
        for recursive in (True, False):
            try:
                observer.schedule(handler, path, recursive=recursive, event_filter=event_filter)
                break
            except OSError as exc:
                if exc.errno != errno.ENOSPC or (not recursive and path == root):
                    raise
        else:
            return pieces  # not even this directory alone: the rest is polled
        pieces += 1
        if not recursive:
            queue.extend(sorted(e.path for e in _subdirs(path)))
    return pieces


def _subdirs(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return [e for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def start_observer(observer: BaseObserver, name: str, handler: FileSystemEventHandler,
                   root: str, event_filter: list[type[FileSystemEvent]]) -> BaseObserver:
    """`observer` watching `root`'s tree for `handler`, started (stopped again if it fails)."""
    observer.name = f"openmemd-watch-{name}"
    observer.schedule(handler, root, recursive=True, event_filter=event_filter)
    try:
        observer.start()
    except BaseException:
        stop_observer(observer, 1.0)
        raise
    return observer


def native_observer(name: str, handler: FileSystemEventHandler, root: str,
                    event_filter: list[type[FileSystemEvent]]) -> BaseObserver:
    """watchdog's native observer on `root`'s tree; when the watch limit stops a recursive
    watch that watchdog will not leave incomplete (7.1.1), as much of the tree as fits, the
    rest left to the subtree poller. Raises what keeps any native watch from starting."""
    try:
        return start_observer(Observer(), name, handler, root, event_filter)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    observer = Observer()
    observer.name = f"openmemd-watch-{name}"
    observer.start()
    try:
        pieces = watch_what_fits(observer, handler, root, event_filter)
    except BaseException:
        stop_observer(observer, 1.0)
        raise
    log.warning("watcher_watch_limit_in_pieces", agent=name, watches=pieces,
                hint="raise fs.inotify.max_user_watches")
    return observer


def polling_observer(interval: float) -> BaseObserver:
    """watchdog's PollingObserver, but one that never follows a symlinked folder (DESIGN):
    `os.stat` would walk into what the link points at, outside the workspace perhaps, or
    round a loop. The watched root itself is listed even when it is a link."""
    return PollingObserverVFS(os.lstat, os.scandir, polling_interval=interval)


class UnwatchedConfirmer:
    """A directory counts as unwatched only when two looks at least `grace` seconds apart
    both miss it: watchdog adds the watch of a new directory from its own thread, so a look
    right after the directory appears can run before that and would poll it for good.

    It also says when a look over the whole tree is due: a look walks every directory (0.1 s
    for the 400 directories and 38k files of the tldr pages), so the daemon's 5-second check
    cannot afford one each time (2-3 % CPU when idle). A whole look is due at start, after a
    queue overflow (events about new directories may be lost), while a miss waits for its
    second look, and every `full_every` seconds as a safety net. New directories are looked
    at one by one when their event arrives.
    """

    def __init__(self, grace: float = 1.0, full_every: float = 300.0) -> None:
        self._grace = grace
        self._full_every = full_every
        self._first_seen: dict[str, float] = {}
        self._unconfirmed: set[str] = set()
        self._wanted = True  # start-up
        self._last_full = float("-inf")

    def want_full_look(self) -> None:
        self._wanted = True

    def full_look_due(self, now: float) -> bool:
        return (self._wanted or bool(self._unconfirmed)
                or now - self._last_full >= self._full_every)

    def look(self, root: str, start: str, may_contain: Callable[[str], bool],
             relative: Callable[[str], str | None]) -> list[str]:
        """`unwatched_dirs`, less the directories not yet missed for `grace` seconds."""
        return self.confirm(unwatched_dirs(root, start, may_contain, relative) or [],
                            whole_tree=start == root, now=time.monotonic())

    def confirm(self, missing: list[str], *, whole_tree: bool, now: float) -> list[str]:
        if whole_tree:  # a full look: what it did not miss is watched after all
            self._first_seen = {r: t for r, t in self._first_seen.items() if r in missing}
            self._unconfirmed &= set(missing)
            self._wanted, self._last_full = False, now
        confirmed = [r for r in missing
                     if now - self._first_seen.setdefault(r, now) >= self._grace]
        self._unconfirmed = (self._unconfirmed | set(missing)) - set(confirmed)
        return confirmed


class SubtreePoller:
    """Polls the subtrees the native observer could not watch, beside it."""

    def __init__(self, name: str, interval: float) -> None:
        self._name = name
        self._interval = interval
        self._lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._watches: dict[str, ObservedWatch] = {}

    def add(self, rel: str, abs_path: str, handler: FileSystemEventHandler,
            event_filter: Iterable[type] | None) -> bool:
        """Poll `abs_path` recursively; False if it (or a parent) is already polled."""
        with self._lock:
            if any(rel == p or rel.startswith(p + "/") for p in self._watches):
                return False
            if self._observer is None:
                self._observer = polling_observer(self._interval)
                self._observer.name = f"openmemd-poll-{self._name}"
                self._observer.start()
            self._watches[rel] = self._observer.schedule(
                handler, abs_path, recursive=True,
                event_filter=list(event_filter) if event_filter else None)
            return True

    def prune(self, exists: Callable[[str], bool]) -> None:
        """Stop polling subtrees that are gone (a new one with that name is checked anew)."""
        with self._lock:
            for rel in [r for r in self._watches if not exists(r)]:
                watch = self._watches.pop(rel)
                if self._observer is not None:
                    try:
                        self._observer.unschedule(watch)
                    except Exception:
                        log.exception("poll_unschedule_failed", agent=self._name, path=rel)

    def paths(self) -> list[str]:
        with self._lock:
            return sorted(self._watches)

    def alive(self) -> bool:
        with self._lock:
            obs = self._observer
            return obs is None or (obs.is_alive() and all(e.is_alive() for e in obs.emitters))

    def stop(self, timeout: float) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
        if observer is not None:
            stop_observer(observer, timeout)


def polled_state(polled: list[str]) -> str:
    """The watcher state while some subtrees are polled beside the native observer."""
    names = ", ".join(polled[:3]) + (f" and {len(polled) - 3} more" if len(polled) > 3 else "")
    return f"degraded (polling {names})"


def stop_observer(observer: BaseObserver, timeout: float) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
    except Exception:
        log.exception("watcher_stop_failed")
