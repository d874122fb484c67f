"""What a backend says of itself for `openmemd doctor` (`store.check_backend`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendCheck:
    """What a backend says of itself for `openmemd doctor`: `problem` is "" when all is well
    (then `detail` says what was found), else the trouble, how bad (`fatal`: nothing works;
    otherwise it works less well) and the fix in one phrase. Nothing is written to check it."""

    name: str
    detail: str = ""
    problem: str = ""
    fatal: bool = False
    fix: str = ""
