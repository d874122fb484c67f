"""Service units: one source of truth, rendered files, dry-run plans."""

from __future__ import annotations

import plistlib
import shlex
import shutil
from pathlib import Path

import pytest

from openmemd.server import service

ROOT = Path(__file__).resolve().parents[2]


def test_repo_files_match_the_templates() -> None:
    for rel, text in service.repo_files().items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, (
            f"{rel} is out of date: run `python -m openmemd.server.service {ROOT}`")


def test_systemd_unit_essentials() -> None:
    unit = service.render_systemd(["/opt/my tools/openmemd"])
    assert 'ExecStart="/opt/my tools/openmemd" run --foreground' in unit
    for line in ("Type=notify", "WatchdogSec=30", "Restart=on-failure", "NoNewPrivileges=yes",
                 "PrivateTmp=no", "ProtectSystem=strict", "WantedBy=default.target"):
        assert line in unit.splitlines()
    assert service.render_systemd(["/x/100%/openmemd"]).count("100%%") == 1


def test_launchd_plist_essentials() -> None:
    data = plistlib.loads(service.render_launchd(["/usr/bin/python3", "-m", "openmemd"],
                                                 Path("/Users/ann")).encode())
    assert data["Label"] == service.LABEL
    assert data["ProgramArguments"] == ["/usr/bin/python3", "-m", "openmemd", "run",
                                        "--foreground"]
    assert data["RunAtLoad"] is True and data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["StandardErrorPath"].startswith("/Users/ann/Library/Logs/openmemd/")


def test_openmemd_command_is_absolute() -> None:
    cmd = service.openmemd_command()
    assert Path(cmd[0]).is_absolute()


@pytest.mark.parametrize("plat", ["linux", "darwin"])
def test_dry_run_prints_and_touches_nothing(plat: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setattr(service, "_platform", lambda: plat)
    assert service.install(dry_run=True) == 0
    out = capsys.readouterr().out
    if plat == "linux":
        assert f"write {tmp_path}/cfg/systemd/user/openmemd.service:" in out
        assert "run systemctl --user enable --now openmemd.service" in out
    else:
        assert f"write {tmp_path}/Library/LaunchAgents/io.github.openmemd.plist:" in out
        assert "run launchctl bootstrap gui/" in out
    assert ("run --foreground" in out) if plat == "linux" else ("<string>--foreground</string>"
                                                                in out)
    assert service.uninstall(dry_run=True) == 0
    assert "remove " in capsys.readouterr().out
    assert not any(tmp_path.rglob("*.service")) and not any(tmp_path.rglob("*.plist"))


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="needs systemctl")
def test_install_without_a_user_session_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """In a container (or over su) `systemctl --user` cannot reach a user manager: one line
    says so, where the unit is and what to do instead, not systemctl's raw lines."""
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "no-runtime-dir"))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")
    monkeypatch.setattr(service, "_platform", lambda: "linux")
    assert service.install() == 1
    out, err = capfd.readouterr()
    unit = service.systemd_unit_path()
    assert unit.is_file() and f"wrote {unit}" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("openmemd: no systemd user session here (")
    assert f"{unit} is written but not started" in lines[0] and "`openmemd run`" in lines[0]


@pytest.mark.parametrize("plat", ["linux", "darwin"])
def test_install_honours_workspace_state_dir_and_config(
        plat: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`service install --workspace W --state-dir S --config C` starts `openmemd run` with the
    same three, and the systemd unit may write W and S (ProtectSystem=strict leaves every
    path it does not list read-only)."""
    from openmemd.cli.main import main

    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.delenv("OPENMEMD_CONFIG", raising=False)
    monkeypatch.setattr(service, "_platform", lambda: plat)
    ws, st, cfg = tmp_path / "my ws", tmp_path / "st", tmp_path / "cfg.toml"
    other = tmp_path / "other-agent"
    cfg.write_text(f'[agents.other]\nworkspace = "{other}"\n', encoding="utf-8")
    assert main(["service", "install", "--dry-run", "--workspace", str(ws),
                 "--state-dir", str(st), "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    flags = ["--config", str(cfg), "--workspace", str(ws), "--state-dir", str(st)]
    if plat == "darwin":
        plist = plistlib.loads(out.split(".plist:\n", 1)[1].split("\nrun ", 1)[0]
                               .replace("\n    ", "\n").strip().encode())
        assert plist["ProgramArguments"][-8:] == ["run", "--foreground", *flags]
        return
    unit = [line.strip() for line in out.splitlines()]
    exec_start = next(line for line in unit if line.startswith("ExecStart="))
    assert exec_start.endswith(f'run --foreground --config {cfg} --workspace "{ws}" '
                               f"--state-dir {st}")
    rw = next(line for line in unit if line.startswith("ReadWritePaths="))
    for path in (f'"-{ws}"', f"-{st}", f"-{other}"):
        assert f" {path}" in rw, rw
    for folder in (ws, st, other):
        assert f"mkdir -p {shlex.quote(str(folder))}" in unit


def test_install_without_flags_renders_the_example_unit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setattr(service, "_platform", lambda: "linux")
    plan = service.install_plan(list(service.EXAMPLE_SYSTEMD_COMMAND))
    assert plan.writes[0][1] == service.repo_files()["systemd/openmemd.service"]
