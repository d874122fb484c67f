"""Concept tags: a few normalised keywords per recalled snippet (OpenClaw's concept vocabulary).

Tags feed REM's themes and the deep phase's "conceptual" signal. Order matters (the first 8
are kept): protected glossary terms, then compound tokens (`a.b`, `a/b`, `a-b`, `a_b`), then
plain words. JavaScript's Intl.Segmenter is replaced by a split on non-letter/digit runs, which
is identical for space-separated scripts; an unspaced CJK run becomes one tag when it is at
most 32 characters long (the segmenter would cut it into dictionary words).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

MAX_CONCEPT_TAGS = 8
MAX_TAG_CHARS = 32

_STOP_WORDS = frozenset(w.lower() for w in (
    # shared
    "about", "after", "agent", "again", "also", "because", "before", "being", "between",
    "build", "called", "could", "daily", "default", "deploy", "during", "every", "file",
    "files", "from", "have", "into", "just", "line", "lines", "long", "main", "make", "memory",
    "month", "more", "most", "move", "much", "next", "note", "notes", "over", "part", "past",
    "port", "same", "score", "search", "session", "sessions", "short", "should", "since",
    "some", "than", "that", "their", "there", "these", "they", "this", "through", "today",
    "using", "with", "work", "workspace", "year",
    # english
    "and", "are", "for", "its", "our", "then", "were",
    # spanish
    "al", "con", "como", "de", "del", "el", "en", "es", "la", "las", "los", "para", "por",
    "que", "se", "sin", "su", "sus", "una", "uno", "unos", "unas", "y",
    # french
    "au", "aux", "avec", "dans", "des", "du", "est", "et", "le", "les", "ou", "pour", "qui",
    "sans", "ses", "son", "sur", "un",
    # german
    "auf", "aus", "bei", "das", "dem", "den", "der", "die", "ein", "eine", "einem", "einen",
    "einer", "für", "im", "in", "mit", "nach", "oder", "ohne", "über", "und", "von", "zu",
    "zum", "zur",
    # cjk function words
    "が", "から", "する", "して", "した", "で", "と", "に", "の", "は", "へ", "まで", "も", "や",
    "を", "与", "为", "了", "及", "和", "在", "将", "或", "把", "是", "用", "的", "과", "는", "도",
    "로", "를", "에", "에서", "와", "은", "으로", "을", "이", "하다", "한", "할", "해", "했다",
    # openmemd addition: English function words OpenClaw's list lacks ("the" was the top REM
    # "theme" of every workspace we tried)
    "all", "any", "been", "but", "can", "did", "does", "get", "got", "had", "has", "her",
    "him", "his", "how", "not", "now", "off", "one", "out", "she", "the", "them", "was", "what",
    "when", "where", "which", "who", "why", "will", "would", "you", "your",
    # path noise
    "cjs", "cpp", "cts", "jsx", "json", "md", "mjs", "mts", "text", "toml", "ts", "tsx", "txt",
    "yaml", "yml",
))

_GLOSSARY = tuple(unicodedata.normalize("NFKC", w).lower() for w in (
    "backup", "backups", "embedding", "embeddings", "failover", "gateway", "glacier", "gpt",
    "kv", "network", "openai", "qmd", "router", "s3", "vlan", "sauvegarde", "routeur",
    "passerelle", "konfiguration", "sicherung", "überwachung", "configuración", "respaldo",
    "enrutador", "puerta-de-enlace", "バックアップ", "フェイルオーバー", "ルーター", "ネットワーク",
    "ゲートウェイ", "障害対応", "路由器", "备份", "故障转移", "网络", "网关", "라우터", "백업",
    "페일오버", "네트워크", "게이트웨이", "장애대응",
))

_WORD = r"[^\W_]+"  # letters and digits of any script
_COMPOUND_RE = re.compile(rf"{_WORD}(?:[._/-]{_WORD})+")
_SEGMENT_SPLIT_RE = re.compile(r"[\W_]+")
_EDGE_RE = re.compile(r"^[\W_]+|[\W_]+$")
_DIGITS_RE = re.compile(r"^\d+$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:\.[^\W_]+)?$")


def _is_han(ch: str) -> bool:
    return ("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"
            or "\U00020000" <= ch <= "\U0002ffff")


def _is_kana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u31f0" <= ch <= "\u31ff" or "\uff66" <= ch <= "\uff9f"


def _is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7af" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f"


def _is_cjk(ch: str) -> bool:
    return _is_han(ch) or _is_kana(ch) or _is_hangul(ch)


def _normalize_token(raw: str) -> str | None:
    token = _EDGE_RE.sub("", unicodedata.normalize("NFKC", raw)).replace("_", "-").lower()
    if not token or len(token) > MAX_TAG_CHARS or not any(ch.isalnum() for ch in token):
        return None
    if _DIGITS_RE.match(token) or _DATE_RE.match(token):
        return None
    min_len = 2 if any(_is_cjk(ch) for ch in token) else 3
    if len(token) < min_len:
        return None
    kana_only = all(_is_kana(ch) or not ch.isalnum() for ch in token) and any(map(_is_kana, token))
    if kana_only and len(token) < 3:
        return None
    if token in _STOP_WORDS:
        return None
    return token


def derive_concept_tags(path: str, snippet: str, limit: int = MAX_CONCEPT_TAGS) -> list[str]:
    """Up to `limit` tags from the note's file name and the snippet."""
    if limit <= 0:
        return []
    source = f"{posixpath.basename(path.replace(chr(92), '/'))} {snippet}"
    folded = unicodedata.normalize("NFKC", source).lower()
    raw_tokens = [term for term in _GLOSSARY if term in folded]
    raw_tokens += _COMPOUND_RE.findall(source)
    raw_tokens += [part for part in _SEGMENT_SPLIT_RE.split(source) if part]
    tags: list[str] = []
    for raw in raw_tokens:
        token = _normalize_token(raw)
        if token is None or token in tags:
            continue
        tags.append(token)
        if len(tags) >= limit:
            break
    return tags
