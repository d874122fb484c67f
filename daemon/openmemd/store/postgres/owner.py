"""Which workspace fills a namespace: its `ns_meta` row `workspace`, "host:/absolute/path".

A namespace is the index of one workspace. The writer lock alone does not say whose: once the
daemon writing a namespace stopped, a daemon configured with the same namespace for another
workspace took the lock and "synced" the namespace to its own Markdown, deleting every note of
the first. So the first writer records its workspace, under the writer
lock, and every later one must be that workspace (a restart, a second daemon of the same
workspace waiting for the lock) unless it is told to take the namespace over (`adopt`, for
`openmemd store adopt`). Readers (a team searching the namespace) never look at it.

The row stays through a rebuild's swap and a heal (store.py keeps it when it empties the
namespace): only `adopt` changes it. A namespace filled before this row existed has none, and
its next writer records itself.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import psycopg

from openmemd.errors import IndexLockedError
from openmemd.log import get_logger
from openmemd.store.postgres.schema import SCHEMA

log = get_logger(__name__)
KEY = "workspace"
_READ = f"SELECT value FROM {SCHEMA}.ns_meta WHERE ns = %s AND key = '{KEY}'"
_WRITE = (f"INSERT INTO {SCHEMA}.ns_meta(ns, key, value) VALUES (%s, '{KEY}', %s)"
          " ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value")


class NamespaceOwnedError(IndexLockedError):
    """The namespace is filled from another workspace: writing it would replace that
    workspace's index with this one's. Locked for this workspace, as for a live writer."""


def workspace_owner(workspace: Path) -> str:
    """This host and the workspace's real path (a symlinked path names the same workspace)."""
    return f"{socket.gethostname()}:{workspace.resolve()}"


def claim(conn: psycopg.Connection[Any], ns: str, owner: str, *, shown: str) -> None:
    """Under the writer lock: record `owner` if the namespace has none yet; refuse it if
    another workspace fills the namespace."""
    row = conn.execute(_READ, (ns,)).fetchone()
    if row is None:
        conn.execute(_WRITE, (ns, owner))
        log.info("store_namespace_claimed", namespace=ns, workspace=owner)
        return
    if row[0] != owner:
        raise NamespaceOwnedError(
            f"namespace {ns!r} at {shown} is filled from {row[0]}; this workspace is {owner}"
            " — run `openmemd store adopt` here to take it over (it is then refilled from"
            " this workspace), or give this workspace its own store.namespace")


def adopt(conn: psycopg.Connection[Any], ns: str, owner: str) -> str:
    """Under the writer lock: make `owner` the namespace's workspace; returns the one it had
    ("" if none was recorded)."""
    row = conn.execute(_READ, (ns,)).fetchone()
    conn.execute(_WRITE, (ns, owner))
    previous = "" if row is None else str(row[0])
    if previous != owner:
        log.warning("store_namespace_adopted", namespace=ns, workspace=owner, previous=previous)
    return previous
