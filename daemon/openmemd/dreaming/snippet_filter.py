"""Snippet hygiene: whitespace normalisation and the filter that keeps dreaming's own output
(and empty Markdown scaffolding) out of the recall store and out of MEMORY.md.

OpenClaw's field reports (#67580, #89444, #87080, #142393) are about raw "Candidate: …" report
lines and bare headings getting promoted. Path rules already exclude memory/dreaming/, but a
report line can still reach a dated note (OpenClaw's inline storage mode, or a user pasting a
report), so the text itself is checked too, at record time and again at promotion time.
"""

from __future__ import annotations

import re

from openmemd.text.promotion import MARKER_PREFIX

_WS_RE = re.compile(r"\s+")
# A search layer may append the citation to the snippet (OpenClaw's tool does); it is not text.
_CITATION_SUFFIX_RE = re.compile(r"\n\s*Source:\s*\S+#L\d+(?:-L?\d+)?\s*$")
_ELLIPSIS_EDGE_RE = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")

_PROMOTION_MARKER_RE = re.compile(r"<!--\s*" + re.escape(MARKER_PREFIX), re.I)
_DREAMING_FENCE_RE = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:", re.I)
_NARRATIVE_PROMPT_RE = re.compile(
    r"\[[^\]]*dreaming-narrative[^\]]*]\s*(?:User|Assistant):\s*"
    r"Write a dream diary entry from these memory fragments", re.I)
_REPORT_LEAD_RE = re.compile(
    r"\b(?:Candidate|Reflections?):|\bTheme:\s*`[^`]*`\s+kept surfacing across", re.I)
# The metadata lines of light/REM reports, with the value shapes those reports print.
_REPORT_FIELD_RES = (
    re.compile(r"\bconfidence:\s*\d", re.I),
    re.compile(r"\bevidence:\s*(?:memory/|\S+:\d+-\d+)", re.I),
    re.compile(r"\bstatus:\s*staged\b", re.I),
    re.compile(r"\brecalls:\s*\d+\b", re.I),
    re.compile(r"\bnote:\s*reflection\b", re.I),
)
_REPORT_FIELD_ONLY_RE = re.compile(
    r"^(?:[-*+]\s+)?(?:confidence:\s*\d+(?:\.\d+)?|recalls:\s*\d+|status:\s*staged|"
    r"note:\s*reflection|evidence:\s*\S+:\d+-\d+(?:,\s*\S+:\d+-\d+)*)$", re.I)
# The bracketed annotations of REM truths and MEMORY.md promotion bullets.
_ANNOTATION_RE = re.compile(
    r"\[(?:score=\d(?:\.\d+)?\s+recalls=\d+|confidence=\d(?:\.\d+)?\s+evidence=)", re.I)
_LEADING_MARKERS_RE = re.compile(r"^(?:[-*+>]\s*)+")
_TOKEN_SPLIT_RE = re.compile(r"[^a-z0-9]+")
_HEADING_RE = re.compile(r"^#{1,6}\s+\S")


def normalize_snippet(raw: str) -> str:
    """Trim and collapse whitespace runs to one space (OpenClaw's normalizeSnippet)."""
    return _WS_RE.sub(" ", raw.strip()) if raw else ""


def clean_hit_snippet(raw: str) -> str:
    """A search hit's snippet without an appended `Source:` citation."""
    return _CITATION_SUFFIX_RE.sub("", raw or "")


def strip_ellipses(snippet: str) -> str:
    """Drop leading/trailing ellipses a search layer may add around a cut-out snippet."""
    return _ELLIPSIS_EDGE_RE.sub("", snippet).strip()


def jaccard(left: str, right: str) -> float:
    """Similarity of lower-case ASCII alphanumeric token sets (OpenClaw's dedupe measure)."""
    a = {t for t in _TOKEN_SPLIT_RE.split(left.lower()) if t}
    b = {t for t in _TOKEN_SPLIT_RE.split(right.lower()) if t}
    if not a or not b:
        return 1.0 if left.strip().lower() == right.strip().lower() else 0.0
    return len(a & b) / len(a | b)


def same_text(left: str, right: str, threshold: float = 0.5) -> bool:
    """Loosely the same note text (an edit, a cut-out, a heading prefix), not other words."""
    a, b = normalize_snippet(left), normalize_snippet(right)
    return a == b or (bool(a) and bool(b) and (a in b or b in a)) or jaccard(a, b) >= threshold


def looks_like_dreaming_output(raw: str) -> bool:
    """True for text shaped like a light/REM report line, a promotion bullet or a marker."""
    snippet = normalize_snippet(raw)
    if not snippet:
        return False
    if (_PROMOTION_MARKER_RE.search(snippet) or _DREAMING_FENCE_RE.search(snippet)
            or _NARRATIVE_PROMPT_RE.search(snippet) or _ANNOTATION_RE.search(snippet)):
        return True
    if _REPORT_FIELD_ONLY_RE.match(snippet):
        return True
    fields = sum(1 for pattern in _REPORT_FIELD_RES if pattern.search(snippet))
    if fields >= 2:
        return True
    return fields >= 1 and bool(_REPORT_LEAD_RE.search(snippet[:240]))


def _is_marker_only(line: str) -> bool:
    stripped = _LEADING_MARKERS_RE.sub("", line.strip()).strip()
    return not stripped or not any(ch.isalnum() for ch in stripped)


def _is_markdown_skeleton(raw: str) -> bool:
    """Only headings and empty bullets: a note's scaffolding, not a memory."""
    lines = [line.strip() for line in re.split(r"\r?\n", raw) if line.strip()]
    if not lines:
        return True
    placeholder = False
    for line in lines:
        if _is_marker_only(line):
            placeholder = True
            continue
        without = _LEADING_MARKERS_RE.sub("", line).strip()
        if _HEADING_RE.match(without):
            if without != line or re.search(r"(?:^|\s)[-*+>]\s*$", line):
                placeholder = True
            continue
        return False
    return placeholder


def is_unpromotable(raw: str) -> bool:
    """Never recorded, never promoted: empty, dreaming-shaped, or bare Markdown scaffolding."""
    snippet = normalize_snippet(raw)
    if not snippet or looks_like_dreaming_output(snippet) or _is_marker_only(snippet):
        return True
    return _is_markdown_skeleton(raw)
