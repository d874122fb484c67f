"""Secrets as a person writes them in chat, not as a config file does: `**Password:** x`,
`pwd: x`, "the password for the router is x", "my API key is x", `password: "a b c"`,
`mysql -px`, `sshpass -p x`. The table of forms is tests/index/test_redact_chat.py.

Rule: a value is masked when it follows a secret's name (and maybe "for/to/of/on/at/in/with
<a few words>") and "is"/"was"/":"/"=", and is one token (spaces only inside quotes, backticks
or bold) that is not a word describing the secret ("strong", "required", "in", "12 characters",
a participle such as "revoked"), a path or a URL; after "secret" or "token" alone, which prose
uses for anything, it must also look like a token: a digit, a symbol or a capital inside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Names that always mean a credential; "pwd" counts only before ":" or "=" (it is also the
# shell command), "secret" and "token" only before a token-like value.
_NAMES = (r"pass(?:word|wd|phrase|code)|api[ _\-]?(?:key|token|secret)"
          r"|(?:access|auth|bearer|refresh|session)[ _\-]?token|(?:secret|private)[ _\-]?key"
          r"|(?:client|app)[ _\-]?secret|pwd|secret|token")
_LOOSE_NAMES = frozenset({"secret", "token"})
# "the password for the router", "the password to my NAS": a few words, no sentence break.
_QUALIFIER = r"(?:\s+(?:for|to|of|on|at|in|with)\s+[^.,;:!?=\n\"'`*]{1,40}?)?"
_SEPARATOR = (r"[*_`'\"]{0,2}\s*(?::=|=>|[:=])(?:\*{1,2}|__)?\s*"
              r"|\s+(?:is|was)(?:\s+(?:now|still|just|actually))?\s*:?\s*")
# A quoted, backticked or bold value may hold spaces (an unclosed quote runs to the end of the
# message); a bare one ends before a space, and its trailing punctuation ends the sentence (cut
# in Python: a lazy match with a lookahead is quadratic on a run of dots).
_VALUE = (r"\"(?P<dq>[^\n\"]{1,200}?)(?:\"|$)|'(?P<sq>[^\n']{1,200}?)(?:'|$)"
          r"|`(?P<bq>[^\n`]{1,200}?)(?:`|$)|\*\*(?P<bold>[^\n*]{1,200}?)(?:\*\*|$)"
          r"|[\"'`]?(?P<bare>[^\s\"'`]+)")
_QUOTED = ("dq", "sq", "bq", "bold")
_LABELLED = re.compile(rf"(?i)(?<![\w\-])(?P<name>{_NAMES}){_QUALIFIER}"
                       rf"(?P<sep>{_SEPARATOR})(?:{_VALUE})")

# mysql's -p takes its value glued on (`-p` alone prompts; `-P` is the port); sshpass's may
# follow a space.
_MYSQL = re.compile(r"(?<![\w\-])(?i:mysql(?:dump|admin|import|show|check|sh)?|mariadb"
                    r"(?:-dump|-admin)?)\b[^;|&\n]{0,200}?\s-p(?=\S)")
_SSHPASS = re.compile(r"(?<![\w\-])sshpass\s+(?:-[a-zA-Z]\S*\s+){0,4}?-p\s*(?=\S)")
_FLAG_VALUE = re.compile(r"([\"'])([^\n\"']{1,200})\1|[^\s\"'`]+")

# Words that describe a secret rather than being one ("the password is strong").
_DESCRIPTIONS = frozenset((
    "a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "this", "that", "it",
    "what", "which", "not", "no", "none", "null", "nil", "empty", "blank", "unset", "set",
    "required", "needed", "optional", "mandatory", "wrong", "correct", "incorrect", "invalid",
    "valid", "missing", "expired", "changed", "reset", "too", "strong", "weak", "secure",
    "insecure", "long", "short", "good", "bad", "fine", "ok", "okay", "same", "different", "saved",
    "stored", "hidden", "masked", "redacted", "encrypted", "hashed", "protected", "locked", "in",
    "on", "at", "for", "from", "to", "of", "with", "by", "as", "there", "here", "still", "now",
    "also", "just", "only", "being", "been", "below", "above", "attached", "following", "shown",
    "visible", "generated", "sent", "working", "broken", "case-sensitive", "unknown", "easy",
    "hard", "simple", "complex", "very", "really", "pretty", "quite", "so", "unchanged",
    "correctly"))
_UNITS = re.compile(r"\s+(?:chars?|characters?|digits?|letters?|symbols?|words?|long|bytes?"
                    r"|or more|minimum|max(?:imum)?)\b", re.I)
# "the API key was revoked": a lower-case participle says what happened to the secret.
_PARTICIPLE = re.compile(r"[a-z]{3,}ed")
_SENTENCE_END = ".,;:!?)"
_MASKED = re.compile(r"\*\*\*|.{6}….{4}")


def _is_location(value: str) -> bool:
    return value.startswith(("/", "~/", "./", "../")) or "://" in value


def _token_like(value: str) -> bool:
    return any(c.isdigit() or not c.isalnum() for c in value) or any(
        c.isupper() for c in value[1:])


def _value(m: re.Match[str]) -> tuple[str, int, int, bool]:
    """The labelled value, its span and whether it was quoted (backticked, bold)."""
    group = next((g for g in _QUOTED if m[g] is not None), None)
    if group is not None:
        return m[group], m.start(group), m.end(group), True
    value = m["bare"].rstrip(_SENTENCE_END)
    return value, m.start("bare"), m.start("bare") + len(value), False


def _names_a_secret(m: re.Match[str], value: str, end: int, quoted: bool) -> bool:
    """Whether a labelled value is a secret, by the module's rule."""
    if not value or _MASKED.fullmatch(value):
        return False
    if quoted:
        return True
    if value.lower() in _DESCRIPTIONS or _is_location(value) or _PARTICIPLE.fullmatch(value):
        return False
    if value.isdigit() and _UNITS.match(m.string, end):
        return False  # "is 12 characters long"
    name = m["name"].lower()
    if name == "pwd" and not re.search(r"[:=]", m["sep"]):
        return False
    return name not in _LOOSE_NAMES or _token_like(value)


def _mask_labelled(mask: Callable[[str], str]) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        value, start, end, quoted = _value(m)
        if not _names_a_secret(m, value, end, quoted):
            return m[0]
        whole = m.start()
        return m[0][:start - whole] + mask(value) + m[0][end - whole:]
    return replace


def _mask_after(pattern: re.Pattern[str], text: str, mask: Callable[[str], str]) -> str:
    """Masks the value that follows each match of `pattern` (quoted: what is inside)."""
    out, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue
        value = _FLAG_VALUE.match(text, m.end())
        if value is None:
            continue
        inner = 2 if value[2] is not None else 0
        out += [text[pos:value.start(inner)], mask(value[inner])]
        pos = value.end(inner)
    return "".join(out) + text[pos:]


def redact_chat(text: str, mask: Callable[[str], str]) -> str:
    text = _LABELLED.sub(_mask_labelled(mask), text)
    text = _mask_after(_MYSQL, text, mask)
    return _mask_after(_SSHPASS, text, mask)
