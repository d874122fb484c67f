"""A team on one real PostgreSQL database, from the command line: a hit from a colleague's
namespace is printed with its namespace, and `get --namespace` reads that hit's own lines
(from the shared index: the colleague's files are not on this machine), never the local
file of the same name."""

from __future__ import annotations

import json

import pytest

from openmemd.cli import main

NOTE = "memory/2026-11-30.md"
LONG = " ".join(f"walrus{n}" for n in range(250))  # one line stored in two chunk pieces


@pytest.fixture
def team(tmp_path, pg_url, capsys):
    def setup(name: str, searched: str = "") -> list[str]:
        ws = tmp_path / name
        (ws / "memory").mkdir(parents=True)
        config = tmp_path / f"{name}.toml"
        config.write_text(
            f'workspace = "{ws}"\nstate_dir = "{tmp_path / name}-state"\n'
            '[embedding]\nprovider = "none"\n'
            f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\nnamespace = "team/{name}"\n'
            f"{searched}", encoding="utf-8")
        return ["--config", str(config), "--endpoint", f"ipc://{tmp_path}/{name}-none.sock"]

    bob = setup("bob")
    alice = setup("alice", 'search_namespaces = ["team/alice", "team/bob"]\n')
    (tmp_path / "bob" / NOTE).write_text(
        f"# Bob's day\n\nSaw a walrus at the pier.\n{LONG}\nEnd of note.\n")
    (tmp_path / "alice" / NOTE).write_text("# Alice's day\n\nBought a kettle.\n")
    assert main(["index", *bob]) == 0 and main(["index", *alice]) == 0
    capsys.readouterr()

    def run(who: list[str], *args: str) -> tuple[int, str, str]:
        code = main([*args, *who])
        out = capsys.readouterr()
        return code, out.out, out.err

    return alice, run


def test_a_colleagues_hit_shows_its_namespace_and_get_reads_it(team):
    alice, run = team
    code, out, _ = run(alice, "search", "walrus", "pier", "--json")
    (hit,) = [r for r in json.loads(out)["results"] if r["path"] == NOTE]
    assert code == 0 and hit["namespace"] == "team/bob"
    code, out, _ = run(alice, "search", "walrus", "pier")
    assert out.splitlines()[0].endswith(f" {NOTE}:1-3  [namespace team/bob]  → {NOTE}#L3")

    code, out, err = run(alice, "get", "--namespace", "team/bob", f"{NOTE}:3-3")
    assert (code, out, err) == (0, "Saw a walrus at the pier.\n", "")
    code, out, _ = run(alice, "get", "--namespace", "team/bob", NOTE, "--json")
    got = json.loads(out)
    assert got["text"] == f"# Bob's day\n\nSaw a walrus at the pier.\n{LONG}\nEnd of note."
    assert (got["namespace"], got["totalLines"], got["from"]) == ("team/bob", 5, 1)
    # without the namespace: alice's own file of that name, as before
    code, out, _ = run(alice, "get", f"{NOTE}:3-3")
    assert (code, out) == (0, "Bought a kettle.\n")
    # own namespace named explicitly: the own file too
    code, out, _ = run(alice, "get", "--namespace", "team/alice", f"{NOTE}#L3")
    assert (code, out) == (0, "Bought a kettle.\n")


def test_get_of_a_namespace_not_searched_or_a_path_not_there_is_one_line(team):
    alice, run = team
    code, out, err = run(alice, "get", "--namespace", "team/carol", NOTE)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "'team/carol' is not one agent main searches (store.search_namespaces)" in err
    code, _, err = run(alice, "get", "--namespace", "team/bob", "memory/nope.md")
    assert code == 1 and "memory/nope.md: not in the index of namespace team/bob" in err
    code, _, err = run(alice, "get", "--namespace", "team/bob", f"{NOTE}:99")
    assert code == 2 and "has 5 lines; line 99 is past its end" in err
