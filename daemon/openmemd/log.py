"""Logging set-up: structlog on top of the stdlib, so our events and those of libraries
(watchdog, APScheduler) come out in one format.

Readable console lines on a terminal; JSON lines otherwise, which is what journald and launchd
capture (one event per line, machine-readable, no colour codes).
"""

from __future__ import annotations

import logging
import sys
from typing import IO, Any

import structlog

from openmemd.config import LogSettings, Settings
from openmemd.config.layers import Loaded

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}
# Libraries that log every routine step at INFO (APScheduler: "Running job ...").
_QUIET = {"apscheduler": logging.WARNING, "watchdog": logging.WARNING}
_HANDLER_NAME = "openmemd"


def configure_logging(settings: Settings | LogSettings | None = None,
                      force_format: str | None = None, *, stream: IO[str] | None = None,
                      log_layer_warning: bool = True) -> str:
    """Configure structlog and the root logger; safe to call again (SIGHUP reload).

    `force_format` ("console" | "json") wins over the settings. Returns the format in use.
    A skipped settings layer is logged unless `log_layer_warning` is off (a command prints
    it as a line of its own).
    """
    log = settings.log if isinstance(settings, Settings) else (settings or LogSettings())
    stream = stream or sys.stderr
    fmt = force_format or log.format
    if fmt == "auto":
        fmt = "console" if _isatty(stream) else "json"

    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=False),
    ]
    if fmt == "json":
        renderer: Any = structlog.processors.JSONRenderer(sort_keys=False)
        # Frames without their local variables (structlog shows them by default): locals hold
        # what must never reach a log (a store URL with its password, an API key, the text
        # of a note) and made one failure's line tens of kilobytes long.
        shared.append(structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False)))
    else:
        # plain tracebacks: with `rich` installed structlog would print locals here too
        renderer = structlog.dev.ConsoleRenderer(colors=_isatty(stream),
                                                 exception_formatter=structlog.dev.plain_traceback)

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
    formatter = structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        foreign_pre_chain=shared,
    )
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter)
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


def set_level(level: str) -> None:
    logging.getLogger().setLevel(_LEVELS.get(level, logging.INFO))
    for name, floor in _QUIET.items():
        logging.getLogger(name).setLevel(logging.INFO if level == "debug" else floor)


def get_logger(name: str) -> Any:
    """A structlog logger bound to `name` (use the module's ``__name__``)."""
    return structlog.stdlib.get_logger(name)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
