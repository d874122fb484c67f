"""`ns_lexemes` (n(q) per namespace and lexeme, for the keyword leg) always equals what the
stored tsvectors say, whatever writes, fails or rebuilds; a version-1 database gets it filled."""

from __future__ import annotations

import psycopg
import pytest
from pg_rows import fill, row

from openmemd.store.base import RowRejectedError
from openmemd.store.postgres import bulk, schema
from openmemd.store.postgres.schema import SCHEMA

TRUTH = (f"SELECT c.ns, u.lexeme, count(*) FROM {SCHEMA}.chunks c, unnest(c.fts) u"
         " GROUP BY 1, 2")


def counted(url: str) -> dict[tuple[str, str], int]:
    """The table, zero rows left out (readers treat 0 as absent)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(f"SELECT ns, lexeme, docs FROM {SCHEMA}.ns_lexemes"
                            " WHERE docs <> 0").fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


def truth(url: str) -> dict[tuple[str, str], int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {(r[0], r[1]): r[2] for r in conn.execute(TRUTH).fetchall()}


def assert_invariant(url: str) -> dict[tuple[str, str], int]:
    got = counted(url)
    assert got == truth(url)
    return got


DOCS = {
    "a.md": [row("a1", "a.md", "The support group met on Monday."),
             row("a2", "a.md", "Support tickets pile up; supporting them is work.")],
    "b.md": [row("b1", "b.md", "Painting landscapes after work. 北京大学")],
}


def test_inserts_count_each_lexeme_once_per_chunk(pg_store, pg_url) -> None:
    fill(pg_store(), DOCS)
    got = assert_invariant(pg_url)
    assert got[("host/main", "support")] == 2  # "support" twice in a2 counts one chunk
    assert got[("host/main", "work")] == 2
    assert got[("host/main", "paint")] == 1  # stemmed server-side


def test_replace_with_other_text_and_delete(pg_store, pg_url) -> None:
    store = pg_store()
    w = fill(store, DOCS)
    with w.transaction():
        w.replace_chunks("a.md", [row("a1", "a.md", "Only gardening now.")])
    got = assert_invariant(pg_url)
    assert ("host/main", "support") not in got and got[("host/main", "garden")] == 1
    with w.transaction():
        w.delete_file("b.md")
    got = assert_invariant(pg_url)
    assert ("host/main", "paint") not in got and ("host/main", "work") not in got
    with w.transaction():  # a path replaced twice in one transaction: the last rows count
        w.replace_chunks("c.md", [row("c1", "c.md", "first words")])
        w.replace_chunks("c.md", [row("c1", "c.md", "second thoughts")])
        w.upsert_file("c.md", "memory", "fh", 1, 1, 1, 1)
    got = assert_invariant(pg_url)
    assert ("host/main", "first") not in got and got[("host/main", "second")] == 1


def test_namespaces_are_counted_apart(pg_store, pg_url) -> None:
    fill(pg_store(), DOCS)
    fill(pg_store(agent="ops"), {"x.md": [row("x1", "x.md", "support desk")]})
    got = assert_invariant(pg_url)
    assert got[("host/main", "support")] == 2 and got[("host/ops", "support")] == 1


def test_rolled_back_transactions_leave_the_counts(pg_store, pg_url) -> None:
    store = pg_store()
    w = fill(store, DOCS)
    before = assert_invariant(pg_url)
    with pytest.raises(RuntimeError), w.transaction():
        w.replace_chunks("a.md", [row("a1", "a.md", "rolled back words")])
        w.delete_file("b.md")
        w.replace_chunks("d.md", [row("d1", "d.md", "never here")])
        raise RuntimeError("boom")
    assert assert_invariant(pg_url) == before
    # a refused batch (one id on two paths) fails inside its transaction: nothing is written
    with pytest.raises(RowRejectedError), w.transaction():
        w.replace_chunks("e.md", [row("e1", "e.md", "elephant")])
        w.replace_chunks("f.md", [row("e1", "f.md", "ferret")])
    assert assert_invariant(pg_url) == before
    assert w.file_hash("e.md") is None


def test_rebuild_swaps_the_counts_in(pg_store, pg_url) -> None:
    store = pg_store()
    fill(store, DOCS)

    def build(staging):
        with staging.transaction():
            staging.replace_chunks("n.md", [row("n1", "n.md", "A new index of support")])
            staging.upsert_file("n.md", "memory", "fh", 1, 1, 1, 1)
        return "built"

    assert store.rebuild(build) == "built"
    got = assert_invariant(pg_url)
    assert got == {("host/main", "a"): 1, ("host/main", "new"): 1, ("host/main", "index"): 1,
                   ("host/main", "of"): 1, ("host/main", "support"): 1}

    def broken(staging):
        with staging.transaction():
            staging.replace_chunks("z.md", [row("z1", "z.md", "zebra")])
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError):
        store.rebuild(broken)
    assert assert_invariant(pg_url) == got  # the staging counts went with the staging rows
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(f"SELECT count(*) FROM {SCHEMA}.ns_lexemes").fetchone()[0] == 5


def test_batches_flushed_mid_transaction_and_read_back(pg_store, pg_url, monkeypatch) -> None:
    monkeypatch.setattr(bulk, "FLUSH_ROWS", 3)
    store = pg_store()
    w = store.writer()
    with w.transaction():
        for i in range(5):
            w.replace_chunks(f"p{i}.md", [row(f"p{i}a", f"p{i}.md", f"word{i} shared"),
                                          row(f"p{i}b", f"p{i}.md", "shared again")])
            w.upsert_file(f"p{i}.md", "memory", f"h{i}", 1, 1, 1, 1)
        # the writer reads its own buffered writes
        assert w.file_hash("p4.md") == "h4"
        assert w.count_pending_vectors("m") == 10
        w.delete_file("p0.md")
    got = assert_invariant(pg_url)
    assert got[("host/main", "share")] == 8 and ("host/main", "word0") not in got
    assert w.rows_written == 10


def test_version_1_database_is_migrated(pg_store, pg_url) -> None:
    first = pg_store()
    fill(first, DOCS)
    first.close()
    want = truth(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {SCHEMA}.ns_lexemes")  # as version 1 had it
        conn.execute(f"UPDATE {SCHEMA}.meta SET value = '1' WHERE key = 'schema_version'")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        schema.ensure_schema(conn)
        version = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'"
                               ).fetchone()[0]
    assert version == "2" and want and counted(pg_url) == want
    # and the migrated namespace is written as usual
    w = pg_store().writer()
    with w.transaction():
        w.delete_file("a.md")
    assert ("host/main", "support") not in assert_invariant(pg_url)


def test_a_newer_version_is_refused(pg_store, pg_url) -> None:
    fill(pg_store(), DOCS)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"UPDATE {SCHEMA}.meta SET value = %s WHERE key = 'schema_version'",
                     (str(schema.SCHEMA_VERSION + 1),))
    with psycopg.connect(pg_url, autocommit=True) as conn, \
            pytest.raises(schema.SchemaTooNewError, match="version 3"):
        schema.ensure_schema(conn)
