"""The dreaming package's names load on first use: recording a search's recalls does not import
the sweep."""

from __future__ import annotations

import subprocess
import sys

import openmemd.dreaming as dreaming


def test_every_public_name_resolves_to_its_module() -> None:
    for name in dreaming.__all__:
        value = getattr(dreaming, name)
        assert getattr(value, "__module__", "").startswith("openmemd.dreaming."), name


def test_recording_recalls_does_not_import_the_sweep() -> None:
    code = ("import sys, openmemd.dreaming.recall; "
            "print(sorted(m for m in ('openmemd.dreaming.sweep', 'openmemd.dreaming.explain') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout
