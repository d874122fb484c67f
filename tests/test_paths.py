"""openmemd's own XDG rules (paths.user_dir on Linux) give what platformdirs gives."""

from __future__ import annotations

import sys

import platformdirs
import pytest

from openmemd import paths

KINDS = ("user_config_dir", "user_state_dir", "user_cache_dir", "user_data_dir")
VARS = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platformdirs is used as is")
@pytest.mark.parametrize("xdg", [None, "", "/srv/xdg-{var}", "relative/{var}", "~/tilde-{var}"])
def test_the_user_directories_agree_with_platformdirs(monkeypatch, tmp_path, xdg) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in VARS:
        if xdg is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, xdg.format(var=var.lower()))
    for kind in KINDS:
        assert str(paths.user_dir(kind)) == getattr(platformdirs, kind)(paths.APP), (kind, xdg)
    assert paths.config_file().parent == paths.user_dir("user_config_dir")
