"""The command line: one module per command group, text and JSON rendering."""

from openmemd.cli.main import main

__all__ = ["main"]
