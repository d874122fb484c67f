"""The command line: one module per command group, text and JSON rendering."""

from openmemd.cli.commands import main

__all__ = ["main"]
