"""Logging set-up: structlog on top of the stdlib, so our events and those of libraries
(watchdog, APScheduler) come out in one format.

Readable console lines on a terminal; JSON lines otherwise, which is what journald and launchd
capture (one event per line, machine-readable, no colour codes). A one-shot command's stderr is
the user's: one plain line per event ("brief"), and none for an event its reply carries too
(logged with `in_reply=True`), which the command shows itself.

structlog is imported when the first event is logged, not when a module asks for its logger or
a command sets the format up: it takes tens of milliseconds (it pulls in asyncio), and a command
the daemon answers logs nothing.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import IO, Any

from openmemd.config import LogSettings, Settings
from openmemd.config.layers import Loaded

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}
# Libraries that log every routine step at INFO (APScheduler: "Running job ...").
_QUIET = {"apscheduler": logging.WARNING, "watchdog": logging.WARNING}
_HANDLER_NAME = "openmemd"

_lock = threading.Lock()
# (format, colours) of the last configure_logging that structlog has not been set up with yet
_wanted: tuple[str, bool] | None = None


def configure_logging(settings: Settings | LogSettings | None = None,
                      force_format: str | None = None, *, stream: IO[str] | None = None,
                      log_layer_warning: bool = True, one_shot: bool = False) -> str:
    """Configure structlog and the root logger; safe to call again (SIGHUP reload).

    `force_format` ("console" | "json" | "brief") wins over the settings. Returns the format
    in use. A skipped settings layer is logged unless `log_layer_warning` is off (a command
    prints it as a line of its own). `one_shot`: a command's, not a server's (see above).
    """
    global _wanted
    log = settings.log if isinstance(settings, Settings) else (settings or LogSettings())
    stream = stream or sys.stderr
    fmt = force_format or log.format
    if fmt == "auto":
        fmt = "brief" if one_shot else "console" if _isatty(stream) else "json"

    colors = _isatty(stream)
    with _lock:
        _wanted = (fmt, colors)
        if "structlog" in sys.modules:  # already in use (SIGHUP reload): set it up now
            _configure_structlog()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(_Formatter(fmt, colors))
    if one_shot:
        handler.addFilter(_not_in_reply)
    root.addHandler(handler)
    set_level(log.level)
    if log_layer_warning:
        _warn_once(settings.loaded if isinstance(settings, Settings) else None)
    return fmt


_warned: set[str] = set()


def _warn_once(loaded: Loaded | None) -> None:
    """A settings layer that was skipped (a broken openclaw.json): one line, once a process."""
    warning = loaded.warning if loaded is not None else ""
    if warning and warning not in _warned:
        _warned.add(warning)
        get_logger("openmemd.config").warning("openclaw_json_ignored", reason=warning)


def _not_in_reply(record: logging.LogRecord) -> bool:
    """False for an event the reply carries too (structlog's record holds its event dict)."""
    return not (isinstance(record.msg, dict) and record.msg.get("in_reply"))


def set_level(level: str) -> None:
    logging.getLogger().setLevel(_LEVELS.get(level, logging.INFO))
    for name, floor in _QUIET.items():
        logging.getLogger(name).setLevel(logging.INFO if level == "debug" else floor)


def get_logger(name: str) -> Any:
    """A structlog logger bound to `name` (use the module's ``__name__``)."""
    return _Logger(name)


class _Logger:
    """structlog's logger for `name`, made when it is first used."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._logger is None:
            self._logger = _structlog().stdlib.get_logger(self._name)
        return getattr(self._logger, attr)


class _Formatter(logging.Formatter):
    """structlog's ProcessorFormatter for a format, made when the first record comes (a
    library's record may come before any of ours)."""

    def __init__(self, fmt: str, colors: bool) -> None:
        super().__init__()
        self._wants = (fmt, colors)
        self._formatter: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:  # a handler formats under its own lock: once
            structlog = _structlog()
            shared, renderer = _processors(structlog, *self._wants)
            self._formatter = structlog.stdlib.ProcessorFormatter(
                processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                            _drop_in_reply, renderer],
                foreign_pre_chain=shared)
        return self._formatter.format(record)


def _structlog() -> Any:
    """structlog, imported on first use and set up as the last configure_logging asked."""
    with _lock:  # one thread imports it; the others wait for the whole module
        import structlog

        if _wanted is not None:
            _configure_structlog()
        return structlog


def _configure_structlog() -> None:
    """Apply `_wanted` (under `_lock`)."""
    global _wanted
    import structlog

    assert _wanted is not None
    shared, _renderer = _processors(structlog, *_wanted)
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *shared,
                    structlog.stdlib.PositionalArgumentsFormatter(),
                    structlog.processors.StackInfoRenderer(),
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        # Not cached: level changes on SIGHUP must apply to loggers made before.
        cache_logger_on_first_use=False,
    )
    _wanted = None


def _processors(structlog: Any, fmt: str, colors: bool) -> tuple[list[Any], Any]:
    """The processors every event goes through, and the renderer of `fmt`."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=False),
    ]
    if fmt == "brief":
        return shared, _brief
    if fmt == "json":
        renderer: Any = structlog.processors.JSONRenderer(sort_keys=False)
        # Frames without their local variables (structlog shows them by default): locals hold
        # what must never reach a log (a store URL with its password, an API key, the text
        # of a note) and made one failure's line tens of kilobytes long.
        shared.append(structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False)))
    else:
        # plain tracebacks: with `rich` installed structlog would print locals here too
        renderer = structlog.dev.ConsoleRenderer(colors=colors,
                                                 exception_formatter=structlog.dev.plain_traceback)
    return shared, renderer


def _drop_in_reply(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    event.pop("in_reply", None)  # kept until the handler's filter has read it
    return event


def _brief(_logger: Any, _name: str, event: dict[str, Any]) -> str:
    """`openmemd: warning: file skipped: path notes/a.md, reason too large`: one line."""
    level = event.pop("level", "info")
    for key in ("logger", "timestamp", "_record", "_from_structlog", "stack_info"):
        event.pop(key, None)
    exc_info = event.pop("exc_info", None)
    if exc_info is True:
        exc_info = sys.exc_info()
    if isinstance(exc_info, tuple) and exc_info[1] is not None:
        event["error"] = f"{type(exc_info[1]).__name__}: {exc_info[1]}"
    words = str(event.pop("event", "")).replace("_", " ")
    details = ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in event.items())
    return f"openmemd: {level}: {words}" + (f": {details}" if details else "")


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
