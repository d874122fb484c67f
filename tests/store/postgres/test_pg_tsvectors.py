"""The writer assembles chunks' tsvectors itself (store/postgres/tsvectors.py); what it stores
must be what the server's `to_tsvector` makes of the same text, for every kind of text, and the
lexeme counts must follow."""

from __future__ import annotations

import psycopg
from pg_rows import fill, row
from test_pg_lexemes import assert_invariant

from openmemd.store.postgres import fts
from openmemd.store.postgres.schema import FTS_CONFIG, SCHEMA
from openmemd.store.postgres.tsvectors import Lexicon
from openmemd.text.tokens import fts_index_text

TEXTS = {
    "english": "The supporters supported the support group; supporting them is work. " * 3,
    "accents": "Café crème, naïve façade, Ångström, São Paulo, Dvořák and Ærø.",
    "cjk": "我们在北京大学讨论了记忆系统的设计。明天继续。",
    "mixed": "abc123 123abc 1e10 2024年 v2 x²y ½ 3rd 4th IPv6 UTF8 ÄÖÜ ß straße",
    "scripts": "Москва и Санкт-Петербург; Ελληνικά; हिन्दी; ภาษาไทย; 한국어; עברית",
    "crowded": "again " * 300 + "and once more",  # 300 positions of one lexeme: >256
    "long-word": "before " + "x" * 3000 + " after the long word",  # the parser drops it
    "empty": "",
    "punctuation only": "--- *** ... !!! ???",
    "numbers": "3.14159 2,718 1_000_000 0x1F 10:45 2026-12-01",
}
TOO_MANY = "w " * 16500  # past the last position to_tsvector numbers


def stored_vs_server(url: str) -> list[tuple[str, str, str]]:
    """(id, stored, server-made) for every chunk that differs."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(f"SELECT id, text, fts::text FROM {SCHEMA}.chunks").fetchall()
        out = []
        for cid, text, stored in rows:
            words = " ".join(fts.prepare(fts_index_text(text)))
            made = conn.execute(f"SELECT to_tsvector('{FTS_CONFIG}', %s)::text",
                                (words,)).fetchone()[0]
            if made != stored:
                out.append((cid, stored[:200], made[:200]))
        return out


def test_stored_tsvectors_are_the_servers_for_every_kind_of_text(pg_store, pg_url) -> None:
    docs = {f"{name}.md": [row(f"c{i}", f"{name}.md", text)]
            for i, (name, text) in enumerate(TEXTS.items())}
    docs["many.md"] = [row("many", "many.md", TOO_MANY)]
    docs["all.md"] = [row("all", "all.md", " ".join(TEXTS.values()))]
    fill(pg_store(), docs)
    assert stored_vs_server(pg_url) == []
    assert_invariant(pg_url)


def test_a_second_batch_reuses_what_the_first_taught(pg_store, pg_url) -> None:
    store = pg_store()
    w = fill(store, {"a.md": [row("a1", "a.md", TEXTS["english"])]})
    with w.transaction():  # the same words again, and new ones beside them
        w.replace_chunks("a.md", [row("a1", "a.md", TEXTS["english"] + " gardening")])
        w.replace_chunks("b.md", [row("b1", "b.md", TEXTS["accents"] + TEXTS["cjk"])])
    assert stored_vs_server(pg_url) == []
    assert_invariant(pg_url)


def test_a_full_lexicon_starts_again_and_stays_exact(pg_store, pg_url) -> None:
    pg_store().writer()  # the schema, with its text search configuration
    lexicon = Lexicon(max_words=5)
    texts = [fts.prepare(fts_index_text(t)) for t in TEXTS.values()] + [["gardening"]]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for words in texts:
            lexicon.learn(conn, words)
        made, counts = lexicon.assemble(texts)
        assert made[0] is None  # the first text's words were forgotten: the server's to make
        assert made[-1] is not None and counts == {"garden": 1}
        lexicon.learn(conn, (w for words in texts for w in words))  # too many: all of these
        made, _ = lexicon.assemble(texts)
        assert made[0] is not None
        conn.execute("CREATE TEMP TABLE made (words text, v tsvector)")
        with conn.cursor().copy("COPY made FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "bytea"])  # as the writer sends them (bulk.py)
            for words, payload in zip(texts, made, strict=True):
                if payload is not None:
                    copy.write_row((" ".join(words), payload))
        assert conn.execute(f"SELECT count(*), bool_and(v = to_tsvector('{FTS_CONFIG}', words))"
                            " FROM made").fetchone() == (sum(m is not None for m in made), True)


def test_ascii_text_splits_as_the_unicode_rule_says() -> None:
    """prepare()'s ASCII shortcut gives the letter/digit runs of the general rule."""
    import re

    rule = re.compile(r"[^\W_]+")
    texts = [f"ab{chr(i)}Cd{chr(i)}{chr(i)}9" for i in range(128)]
    texts += ["snake_case and kebab-case, e-mail@host.org: 3.14 ½ x_1", "  ", "", "_"]
    for text in texts:
        assert fts.prepare(text) == rule.findall(text.lower()), repr(text)
