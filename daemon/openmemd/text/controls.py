"""Control characters out of text bound for an agent's prompt or a terminal.

A note is the user's, but any program (or a pasted log) may have put terminal controls in it:
a bell, a colour, an OSC sequence that retitles the window or hides text, NULs. None of them
is text to a model, and some act on the terminal that prints them. `strip_controls` removes
them, a whole escape sequence at once (its parameters and payload are not text either);
`escape_controls` shows them as `\\x1b` escapes where the text names something, a file say,
and must stay recognisable.

Kept: newline and tab. A carriage return ends a line (CRLF, or a lone CR as old Macs wrote).
"""

from __future__ import annotations

import re

# ECMA-48 forms, in the 7-bit (ESC + char) and 8-bit (C1) spellings, each one match:
#   CSI  ESC [  or 0x9B, parameter bytes 0x30-0x3F, intermediates 0x20-0x2F, a final 0x40-0x7E
#   OSC, DCS, SOS, PM, APC  (ESC ] P X ^ _, or 0x9D 0x90 0x98 0x9E 0x9F) a string ended by BEL,
#       ESC \ or 0x9C; one never ended stops at the next escape or the line's end (a
#       terminal would swallow the rest of the note; a reader loses at most that line)
#   other escapes  ESC, intermediates 0x20-0x2F, a final 0x30-0x7E (ESC c, ESC ( B, ESC 7)
# then any single control left: C0 but tab and newline, DEL, C1.
# Negated classes and no nested repeats: one pass over the text, whatever it holds.
_CONTROLS = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c|(?=[\x1b\n])|\Z)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_ENDS = re.compile(r"\r\n?")
# Any character strip_controls acts on (CR included): most text has none, and is returned as is.
_TO_STRIP = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What escape_controls shows as an escape: every control, newline and tab too (a name has no lines).
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` without control characters or escape sequences; CR and CRLF become newlines."""
    if not _TO_STRIP.search(text):
        return text
    return _CONTROLS.sub("", _LINE_ENDS.sub("\n", text))


def escape_controls(name: str) -> str:
    """`name` with each control character (newline and tab too) shown as a `\\xNN` escape."""
    return _ANY_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)

