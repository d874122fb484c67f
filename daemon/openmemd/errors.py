"""Errors that cross module boundaries. Each carries the protocol error code it maps to."""

from __future__ import annotations


class OpenmemdError(Exception):
    """Base class: an expected failure with a clear, user-facing message."""

    code = "internal"


class BadRequestError(OpenmemdError):
    code = "bad_request"


class NotFoundError(OpenmemdError):
    code = "not_found"


class ForbiddenError(OpenmemdError):
    code = "forbidden"


class UnavailableError(OpenmemdError):
    """Something needed is not there right now (no daemon, index locked, provider down)."""

    code = "unavailable"


class WorkspaceError(OpenmemdError):
    """The workspace is missing or unusable."""

    code = "not_found"


class IndexLockedError(UnavailableError):
    """Another process holds the index's writer lock."""


class ConfigError(BadRequestError, ValueError):
    """A setting is unknown, of the wrong type or out of range. The message names key and file.

    Also a ValueError: the settings layers report a bad value of any layer the same way.
    """
