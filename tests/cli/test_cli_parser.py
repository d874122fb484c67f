"""The command line is parsed by the named command's parser alone (cli/parser.py): what it
reads, and what it refuses, are what the whole parser reads and refuses."""

from __future__ import annotations

import argparse

import pytest

from openmemd.cli.parser import COMMANDS, build_parser

LINES = [
    ["search", "what", "did", "we", "decide", "--max-results", "3", "--source", "memory",
     "--json", "--agent", "work"],
    ["get", "MEMORY.md#L3-L9", "--from", "2", "--lines", "4"],
    ["status", "--deep", "--json", "--endpoint", "ipc:///tmp/x.sock"],
    ["context", "--today", "2026-07-03"],
    ["dream", "explain", "memory/2026-07-03.md", "--phase", "deep", "--dry-run"],
    ["store", "copy", "--from", "a.sqlite", "--to", "postgresql://h/db", "--batch", "10"],
    ["add", "a", "note", "--long-term"],
    ["config", "show"],
    ["workspace"],
]


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | str:
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return f"exit {exc.code}"


@pytest.mark.parametrize("argv", LINES, ids=lambda a: a[0])
def test_one_command_parser_reads_what_the_whole_one_reads(argv: list[str]) -> None:
    whole = build_parser([])  # no command named: every command's parser
    assert parse(build_parser(argv), argv) == parse(whole, argv)
    assert isinstance(parse(build_parser(argv), argv), argparse.Namespace)


@pytest.mark.parametrize("argv", [["search"], ["get", "a", "--lines", "x"], ["status", "--nope"],
                                  ["bogus"], ["--version"]])
def test_and_refuses_what_it_refuses(argv: list[str], capsys) -> None:
    narrowed = parse(build_parser(argv), argv)
    first = capsys.readouterr()
    assert narrowed == parse(build_parser([]), argv) and narrowed in ("exit 2", "exit 0")
    assert capsys.readouterr() == first  # the same message


def test_every_command_is_listed_in_the_help(capsys) -> None:
    assert parse(build_parser(["--help"]), ["--help"]) == "exit 0"
    shown = capsys.readouterr().out
    assert all(name in shown for name in COMMANDS)
