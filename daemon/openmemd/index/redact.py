"""Masking secrets in session transcripts before they are indexed.

OpenClaw's "tools" mode (env-style assignments, JSON fields, flags, Bearer, PEM keys, known
token prefixes, Telegram bot tokens), plus formats it leaves in clear: AWS access key ids and
secret keys (labelled or bare), JWTs, passwords inside URLs, Stripe secret/restricted keys,
Slack webhook URLs, and secrets as people write them in chat (`index/redact_chat.py`: "my
password is …", `**Password:** …`, `mysql -p…`). Same shape throughout: first 6 … last 4,
`***` when short.
"""

from __future__ import annotations

import re

from openmemd.index.redact_chat import redact_chat

# The rules' version, in the index's identity: a change re-renders every indexed transcript.
RULES = "chat-v1"

_PREFIXED = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{8,}|ghp_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{8,}|xapp-[A-Za-z0-9\-]{8,}|gsk_[A-Za-z0-9]{8,}"
    r"|AIza[A-Za-z0-9_\-]{8,}|pplx-[A-Za-z0-9]{8,}|npm_[A-Za-z0-9]{8,})")
_TELEGRAM = re.compile(r"\b\d{8,10}:[A-Za-z0-9_\-]{35}\b")
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/\-]+=*)")
# The label may be quoted or bold (`"password": x`, `**password**: x`) and the separator any of
# `=`, `:`, `:=`, `=>`: with only `=`/`:` known, `password => x` masked the `>` of the arrow
# (the label) and kept the value. (`->` is left out: prose says "key -> value" of anything.)
# Bold closing after the separator (`**Password:** x`) is markup, not the value; a quoted value
# may hold spaces (`DB_PASSWORD="a b c"`), an unclosed quote's first word is masked.
_ENV_ASSIGN = re.compile(
    r"(?i)\b([A-Z0-9_]{0,64}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]{0,64}[\"'`*]{0,2}"
    r"\s*(?::=|=>|[=:])(?:\*{1,2}|__)?\s*)"
    r"(?:([\"'`])([^\n\"'`]{1,200})\2|([\"'`]?)([^\s\"'`]+))")
# Any JSON key naming a secret ("apiKey", "SecretAccessKey", "SessionToken", "client_secret").
_JSON_FIELD = re.compile(
    r"(?i)(\"[A-Za-z0-9_\-]{0,64}(?:api_?key|access_?key|private_?key|token|secret|password|passwd"
    r"|credential)[A-Za-z0-9_\-]{0,64}\"\s*:\s*\")([^\"]+)(\")")
_FLAG = re.compile(r"(?i)(--(?:api-key|token|secret|password)(?:=|\s+))(\S+)")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")
# A 40-character AWS secret key introduced as one in prose ("the secret key is …").
_AWS_SECRET = re.compile(
    r"(?i)(\bsecret(?:[ _\-]?access)?[ _\-]?key\b[\"']?\s*(?:[:=]|is|was)?\s*[\"']?)"
    r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])")
# A bare one, with no label at all: any maximal run of exactly 40 base64 characters (so never a
# slice of a longer token, URL or path; a full stop may end the sentence after it) that looks
# like a key, see `_looks_like_aws_secret`.
_BARE_40 = re.compile(
    r"(?<![A-Za-z0-9/+=._\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-]|\.[A-Za-z0-9/+])")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,31}://[^\s:/@]+:)([^\s@/]+)(@)")
_STRIPE = re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}")
_SLACK_WEBHOOK = re.compile(
    r"(?i)(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_\-]+)")
_PEM = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)


_MASKED = re.compile(r"\*\*\*|.{6}….{4}")


def mask(token: str) -> str:
    """Long tokens keep their first 6 and last 4 characters, short ones are starred out.

    A token already masked by an earlier rule is kept as it is (not masked down to `***`)."""
    if _MASKED.fullmatch(token):
        return token
    if len(token) >= 18:
        return f"{token[:6]}…{token[-4:]}"
    return "***"


def _looks_like_aws_secret(token: str) -> bool:
    """Upper case, lower case and digits mixed, as in 30 random bytes in base64. This leaves a
    git SHA-1 (40 hex digits, one case), a word run, and a SHA-256 in base64 (44 with `=`)
    alone; a path of 40 letters and slashes is refused by its leading/trailing or doubled `/`
    or by missing digits. Masking a rare random 40-character id too costs little; a key in
    clear costs a lot."""
    return (any(c.isupper() for c in token) and any(c.islower() for c in token)
            and any(c.isdigit() for c in token) and not token.startswith("/")
            and not token.endswith("/") and "//" not in token)


def _mask_bare_secret(match: re.Match[str]) -> str:
    return mask(match[0]) if _looks_like_aws_secret(match[0]) else match[0]


def _mask_assigned(m: re.Match[str]) -> str:
    if m[3] is not None:
        return f"{m[1]}{m[2]}{mask(m[3])}{m[2]}"
    return f"{m[1]}{m[4]}{mask(m[5])}"


def redact(text: str) -> str:
    text = _PEM.sub("[REDACTED PRIVATE KEY]", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m[1]}{mask(m[2])}{m[3]}", text)
    text = _SLACK_WEBHOOK.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = _JWT.sub(lambda m: mask(m[0]), text)
    text = _AWS_SECRET.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = redact_chat(text, mask)
    text = _ENV_ASSIGN.sub(_mask_assigned, text)
    text = _JSON_FIELD.sub(lambda m: f"{m[1]}{mask(m[2])}{m[3]}", text)
    text = _FLAG.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = _BEARER.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = _PREFIXED.sub(lambda m: mask(m[0]), text)
    text = _STRIPE.sub(lambda m: mask(m[0]), text)
    text = _AWS_KEY_ID.sub(lambda m: mask(m[0]), text)
    text = _BARE_40.sub(_mask_bare_secret, text)
    return _TELEGRAM.sub(lambda m: mask(m[0]), text)
