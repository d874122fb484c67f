"""A database that is not UTF-8 is refused at connect, in one line saying how to create one.

`initdb` in a shell without LANG makes SQL_ASCII databases: the server converts nothing and
the driver hands text back as bytes. Every file was then skipped (`AttributeError: 'bytes'
object has no attribute 'encode'`), `index` exited 0 saying "0 indexed" and `status` printed
the server version as b'18.6'.
"""

from __future__ import annotations

import uuid

import pytest
from pg_cli import cli

HOW = "createdb --encoding=UTF8 --template=template0"


@pytest.fixture
def ascii_url(pg_server):
    name = "ascii_" + uuid.uuid4().hex[:8]
    pg_server.admin(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0"
                    " LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        yield pg_server.url(name)
    finally:
        pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_sql_ascii_database_is_refused_in_one_line(ascii_url, workspace, tmp_path):
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe kestrel nests on the roof.\n")
    for command, exit_code in (("index", 2), ("search", 2)):
        args = (command, "kestrel") if command == "search" else (command,)
        proc = cli(tmp_path, workspace, ascii_url, *args)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == exit_code, (out, err)
        assert "encoded SQL_ASCII, and openmemd needs UTF8" in err and HOW in err
        assert err.count("\n") == 1 and "Traceback" not in err and "indexed" not in out
    proc = cli(tmp_path, workspace, ascii_url, "status")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert "encoded SQL_ASCII" in out + err and "b'" not in out + err
