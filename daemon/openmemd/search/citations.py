"""`citations` (OpenClaw's `memory.citations`) applied to search results.

on: every result keeps its `citation` and its snippet ends with `\n\nSource: <citation>`, the
line an OpenClaw prompt tells the model to quote; off: no citation at all; auto: the
`citation` field only (what openmemd always returned: a local client has no chat context to
tell a direct chat from a group, which is what OpenClaw's auto looks at).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from openmemd.search.results import SearchHit


def apply(hits: Sequence[SearchHit], mode: str) -> list[SearchHit]:
    if mode == "on":
        return [dataclasses.replace(h, snippet=f"{h.snippet}\n\nSource: {h.citation}")
                for h in hits]
    if mode == "off":
        return [dataclasses.replace(h, citation="") for h in hits]
    return list(hits)
