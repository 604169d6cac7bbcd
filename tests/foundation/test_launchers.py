"""Issue 17 point 3: the double-click launchers beside start.sh.

`start.command` (macOS, bash) is run for real: with no uv anywhere it says so in plain words with
the one command that installs it, and otherwise it calls `uv run justkernel demo --open` from the
checkout (a fake uv on PATH records its arguments: uv is not our part). `start.cmd` cannot run
here (no cmd.exe): its text is checked for the same two paths and for CRLF line ends, which
cmd.exe needs for its labels.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ROOT / "start.command"
CMD = ROOT / "start.cmd"
INSTALL_MAC = "curl -LsSf https://astral.sh/uv/install.sh | sh"
INSTALL_WIN = 'powershell -ExecutionPolicy ByPass -c "irm https://astral.sh/uv/install.ps1 | iex"'


def _fake_uv(folder: Path, record: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    uv = folder / "uv"
    uv.write_text(f'#!/bin/sh\nprintf "%s\\n" "$PWD" "$@" > "{record}"\n')
    uv.chmod(0o755)


def _launch(home: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    env = {"HOME": str(home), "PATH": path, "LANG": "C"}
    return subprocess.run(
        [bash, str(COMMAND), *args],
        env=env,
        stdin=subprocess.DEVNULL,  # not a terminal: no "press Enter" wait
        capture_output=True,
        text=True,
        timeout=60,
    )


def _system_path() -> str:
    """PATH with the shell's tools and no uv (checked: the test means "uv missing")."""
    path = "/usr/bin:/bin"
    assert not any((Path(p) / "uv").exists() for p in path.split(":"))
    return path


def test_start_command_says_uv_is_missing_with_the_command_to_install_it(tmp_path: Path) -> None:
    ran = _launch(tmp_path, _system_path())
    assert ran.returncode == 1
    assert "uv is missing" in ran.stdout
    assert INSTALL_MAC in ran.stdout
    assert "double-click start.command again" in ran.stdout


def test_start_command_runs_the_demo_through_uv(tmp_path: Path) -> None:
    record = tmp_path / "args"
    _fake_uv(tmp_path / "bin", record)
    ran = _launch(tmp_path, f"{tmp_path / 'bin'}:{_system_path()}", "--port", "0")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    cwd, *args = record.read_text().splitlines()
    assert Path(cwd) == ROOT  # from the checkout, wherever it was double-clicked from
    assert args == ["run", "justkernel", "demo", "--open", "--port", "0"]


def test_start_command_finds_uv_where_its_installer_puts_it(tmp_path: Path) -> None:
    record = tmp_path / "args"
    _fake_uv(tmp_path / ".local" / "bin", record)  # not on PATH: a profile not read
    ran = _launch(tmp_path, _system_path())
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert record.read_text().splitlines()[1:] == ["run", "justkernel", "demo", "--open"]


def test_start_command_is_executable_and_start_cmd_keeps_both_paths() -> None:
    assert COMMAND.stat().st_mode & stat.S_IXUSR
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-s", "start.command"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert tracked.startswith("100755"), tracked  # executable in every checkout
    raw = CMD.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") > 10  # CRLF throughout
    text = raw.decode("ascii")
    assert "uv run justkernel demo --open %*" in text
    assert "where uv" in text and "goto no_uv" in text
    no_uv = text.split(":no_uv", 1)[1]
    assert "uv is missing" in no_uv and INSTALL_WIN in no_uv and "pause" in no_uv
    assert "start.cmd text eol=crlf" in (ROOT / ".gitattributes").read_text()
    assert os.access(COMMAND, os.R_OK)
