"""Secrets as a person writes them in chat (issue 43), masked in transcripts, search and `get`.

The table of forms: (form, line as typed, what must be masked, what must stay). README's
"Secrets in transcripts" links the same table (docs/privacy.md#secrets-in-transcripts).
"""

from __future__ import annotations

import json
import time

import pytest

from openmemd.api import MemoryIndex
from openmemd.index import identity
from openmemd.index import sessions as sessions_module
from openmemd.index.redact import redact
from openmemd.store.sqlite import db

FORMS = [
    # form, line, masked (never in the output), kept (always in the output); one value each
    ("bold label", "**Password:** Bq4-pine-Quartz", "Bq4-pine-Quartz", "**Password:**"),
    ("bold label, bold value", "**Password:** **Hx7-fern**", "Hx7-fern", "**Password:**"),
    ("pwd", "pwd: Pw3-moss-Amber", "Pw3-moss-Amber", "pwd:"),
    ("password for the router", "the password for the router is Rt5-oak-Slate",
     "Rt5-oak-Slate", "the password for the router is"),
    ("password to the NAS", "the password to the NAS: bluebird-77", "bluebird-77",
     "the password to the NAS:"),
    ("mysql -p", "mysql -u root -pMy9cedarOnyx shop", "My9cedarOnyx", "mysql -u root -p"),
    ("mysqldump -p quoted", "mysqldump -uadmin -p'Dz2 birch' db > db.sql", "Dz2 birch",
     "> db.sql"),
    ("sshpass -p", "sshpass -p Ss8larchJade ssh pi@10.0.0.2", "Ss8larchJade",
     "ssh pi@10.0.0.2"),
    ("the secret is", "the secret is Sc6willowRuby, keep it", "Sc6willowRuby", ", keep it"),
    ("my API key is", "my API key is q8Zt3vLm0pXr7sWc", "q8Zt3vLm0pXr7sWc", "my API key is"),
    ("api key label", "OpenAI API key: k2Yw9dNp4tRs6uVx", "k2Yw9dNp4tRs6uVx", "API key:"),
    ("access token is", "the access token was abc.def.123", "abc.def.123", "access token was"),
    ("quoted with spaces", 'password: "correct horse battery staple" ok',
     "horse battery", '" ok'),
    ("quoted with spaces, single", "the passphrase is 'purple monkey dishwasher'",
     "monkey dish", "the passphrase is"),
    ("quoted, never closed", 'password: "tangerine rocket glacier', "rocket glacier",
     "password:"),
    ("env, quoted with spaces", 'DB_PASSWORD="velvet thunder harbor"', "thunder harbor",
     "DB_PASSWORD="),
    ("password_colon", "password_colon: Pc1hazelTopaz", "Pc1hazelTopaz", "password_colon:"),
    ("password colon", "Password: swordfish", "swordfish", "Password:"),
    ("password is now", "my password is now marmalade!", "marmalade", "!"),
    ("password is a word", "the wifi password is peppermint", "peppermint",
     "wifi password is"),
    ("backticks", "the password is `Bt7 aspen`", "Bt7 aspen", "the password is `"),
]

# Prose about secrets that holds none: the rule keeps it whole.
KEPT = [
    "I forgot my password",
    "the password policy is 12 chars",
    "the password is 12 characters long",
    "the password is strong enough",
    "your password is weak",
    "a password is required",
    "the password is in the vault",
    "the secret is to keep going",
    "the secret is patience",
    "the token is expired",
    "the private key is ~/.ssh/id_ed25519",
    "run pwd: it prints /home/me",
    "pwd: /home/me/projects",
    "the API key is at https://platform.example.com/keys",
    "mysql -u root -p shop",
    "set -P 3306 for mysql",
    "The password is required for the admin page.",
]


@pytest.mark.parametrize(("form", "line", "masked", "kept"), FORMS, ids=[f for f, *_ in FORMS])
def test_chat_form_is_masked(form, line, masked, kept):
    out = redact(line)
    assert masked not in out, out
    assert kept in out, out


@pytest.mark.parametrize("line", KEPT)
def test_prose_without_a_secret_is_kept(line):
    assert redact(line) == line


def _transcript(texts: list[str]) -> str:
    return "".join(json.dumps({"type": "message", "message": {"role": "user", "content": t}})
                   + "\n" for t in texts)


def test_search_and_get_serve_the_masked_form(make_settings, workspace):
    sessions = workspace / "sessions"
    sessions.mkdir()
    (sessions / "chat.jsonl").write_text(_transcript([line for _, line, _, _ in FORMS]))
    with MemoryIndex.open(workspace, config=make_settings(
            'sources = ["memory", "sessions"]\n')) as index:
        index.sync()
        served = []
        for _, line, _, _ in FORMS:
            for hit in index.search(line, max_results=20, min_score=0.0):
                served.append(hit.snippet)
        got = index.get("sessions/chat.jsonl")["text"]
    assert served
    leaked = [form for form, _, masked, _ in FORMS
              if any(masked in text for text in [*served, got])]
    assert leaked == []
    for _, _, _, kept in FORMS:
        assert kept in got


def _stored_text(index: MemoryIndex) -> str:
    conn, _ = db.connect(index.db_path)
    try:
        return "\n".join(r[0] for r in conn.execute(
            "SELECT text FROM chunks UNION ALL SELECT text FROM chunks_fts"))
    finally:
        conn.close()


def test_an_index_built_under_older_rules_is_rendered_again(make_settings, workspace,
                                                            monkeypatch):
    """Upgrading re-renders the transcripts already indexed, unchanged as they are: a secret
    the older rules kept in clear leaves search too, not only `get`."""
    sessions = workspace / "sessions"
    sessions.mkdir()
    (sessions / "chat.jsonl").write_text(_transcript(["the secret is Hx7pineQuartz"]))
    settings = make_settings('sources = ["memory", "sessions"]\n')
    with monkeypatch.context() as older:
        older.setattr(sessions_module, "redact", lambda text: text)
        older.setattr(identity, "REDACTION_RULES", "older", raising=False)
        with MemoryIndex.open(workspace, config=settings) as index:
            index.sync()
            assert "Hx7pineQuartz" in _stored_text(index)  # what an older version stored
    with MemoryIndex.open(workspace, config=settings) as index:
        index.sync()
        assert "Hx7pineQuartz" not in _stored_text(index)
        assert "the secret is ***" in _stored_text(index)


# Adversarial lines cost about what ordinary text of the same length does (a lazy value match
# and an unbounded URL scheme were quadratic: 3-6 s for 40 KB).
ADVERSARIAL = {"dots after a label": "password: " + "." * 40_000,
               "bangs after is": "password is " + "!" * 40_000,
               "a run of -p": "mysql " + "-p" * 20_000,
               "qualifiers": "the password for the " * 2_000,
               "an unclosed quote": 'password: "' + "a " * 20_000}


@pytest.mark.parametrize("line", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_redaction_is_linear(line):
    plain = ("Deploy the penguin service to staging on Friday, then read the logs. "
             * 700)[:len(line)]

    def seconds(text: str) -> float:
        started = time.perf_counter()
        redact(text)
        return time.perf_counter() - started

    assert min(seconds(line) for _ in range(3)) <= 10 * min(seconds(plain) for _ in range(3))


def test_get_masks_openclaws_session_corpus_not_notes(make_settings, workspace):
    """OpenClaw's dreaming copies transcript messages to memory/.dreams/session-corpus/ (not
    indexed, but readable by `get`): served masked like a transcript; a note as written."""
    corpus = workspace / "memory" / ".dreams" / "session-corpus"
    corpus.mkdir(parents=True)
    lines = [line for _, line, _, _ in FORMS]
    (corpus / "2026-01-02.md").write_text("\n".join(f"User: {line}" for line in lines) + "\n")
    (workspace / "memory" / "2026-01-02.md").write_text(lines[3] + "\n")
    with MemoryIndex.open(workspace, config=make_settings()) as index:
        whole = index.get("memory/.dreams/session-corpus/2026-01-02.md")
        ranged = index.get("memory/.dreams/session-corpus/2026-01-02.md", 4, 1)
        note = index.get("memory/2026-01-02.md")["text"]
    assert [form for form, _, masked, _ in FORMS if masked in whole["text"]] == []
    assert whole["lines"] == len(FORMS)
    assert ranged["text"] == "User: the password for the router is ***"
    assert note == lines[3] + "\n"  # the user's own note: never altered
