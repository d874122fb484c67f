"""What only a long-lived process (the daemon) turns on: the vector leg from resident matrices.

A one-shot command keeps sqlite-vec's KNN: loading a matrix of every vector costs more than the
one query it would serve.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from openmemd.store.sqlite import resident


def enable_resident_vectors() -> None:
    resident.enable()


def warm_in_background(db_paths: Iterable[Path]) -> None:
    """Load each index's matrix in a background thread (searches use sqlite-vec until then)."""
    resident.warm_in_background(db_paths)
