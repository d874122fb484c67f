"""Masking secrets in session transcripts before they are indexed (OpenClaw's "tools" mode)."""

from __future__ import annotations

import re

_PREFIXED = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{8,}|ghp_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{8,}|xapp-[A-Za-z0-9\-]{8,}|gsk_[A-Za-z0-9]{8,}"
    r"|AIza[A-Za-z0-9_\-]{8,}|pplx-[A-Za-z0-9]{8,}|npm_[A-Za-z0-9]{8,})")
_TELEGRAM = re.compile(r"\b\d{8,10}:[A-Za-z0-9_\-]{35}\b")
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/\-]+=*)")
_ENV_ASSIGN = re.compile(
    r"(?i)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\s*[=:]\s*)"
    r"([\"']?)([^\s\"']+)(\2)")
_JSON_FIELD = re.compile(
    r"(?i)(\"(?:api_?key|token|secret|password|access_?token|refresh_?token)\"\s*:\s*\")"
    r"([^\"]+)(\")")
_FLAG = re.compile(r"(?i)(--(?:api-key|token|secret|password)(?:=|\s+))(\S+)")
_PEM = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)


def mask(token: str) -> str:
    """Long tokens keep their first 6 and last 4 characters, short ones are starred out."""
    if len(token) >= 18:
        return f"{token[:6]}…{token[-4:]}"
    return "***"


def redact(text: str) -> str:
    text = _PEM.sub("[REDACTED PRIVATE KEY]", text)
    text = _ENV_ASSIGN.sub(lambda m: f"{m[1]}{m[2]}{mask(m[3])}{m[4]}", text)
    text = _JSON_FIELD.sub(lambda m: f"{m[1]}{mask(m[2])}{m[3]}", text)
    text = _FLAG.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = _BEARER.sub(lambda m: f"{m[1]}{mask(m[2])}", text)
    text = _PREFIXED.sub(lambda m: mask(m[0]), text)
    return _TELEGRAM.sub(lambda m: mask(m[0]), text)
