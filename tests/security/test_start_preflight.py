"""`./start.sh test` on a machine missing a tool the suite needs fails, and says which.

Finding: start.sh carried on when a tool was missing and the tests that needed it skipped, so
CI passed without ever running them. Now start.sh runs a preflight (`justkernel check
--require-for-tests`, the capability list `justkernel check` prints) before ruff and pytest.
The machine here has every tool; a PATH of links to everything except valgrind is a machine
without it. JUSTKERNEL_NO_INSTALL=1 keeps start.sh from installing anything while we look.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _uv() -> Path:
    """uv itself (start.sh needs it): `uv run` names it in $UV; else PATH or ~/.local/bin."""
    found = (
        os.environ.get("UV")
        or shutil.which("uv")
        or shutil.which("uv", path=str(Path.home() / ".local" / "bin"))
    )
    assert found, "uv is not installed (the suite needs it: python3 -m pip install uv)"
    return Path(found)


def path_without(tool: str, folder: Path) -> str:
    """A PATH with links to every program on this PATH (and uv) except `tool`."""
    folder.mkdir()
    dirs = [str(_uv().parent), *os.environ["PATH"].split(os.pathsep)]
    for directory in dirs:
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = folder / entry.name
            if entry.name != tool and not link.exists() and os.access(entry.path, os.X_OK):
                link.symlink_to(entry.path)
    assert shutil.which(tool, path=str(folder)) is None
    return str(folder)


def _start(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PATH": f"{_uv().parent}:{os.environ['PATH']}", **env}
    full.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [str(REPO / "start.sh"), *args],
        cwd=REPO,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_start_sh_test_fails_naming_the_missing_tool(tmp_path: Path) -> None:
    done = _start(
        # if the preflight let it through, pytest would run only this harmless file
        "test",
        "tests/test_template_import.py",
        PATH=path_without("valgrind", tmp_path / "bin"),
        JUSTKERNEL_NO_INSTALL="1",
    )
    assert done.returncode != 0, done.stderr
    assert "missing: valgrind" in done.stderr, done.stderr
    assert "apt-get install valgrind" in done.stderr  # and how to fix it
    assert "--partial" in done.stderr  # and how to run without it on purpose
    assert "ruff check" not in done.stderr  # it stopped before linting and testing
    assert "pytest" not in done.stdout


def dpkg_without(package: str, folder: Path) -> str:
    """A dpkg database (for DPKG_ADMINDIR) that is this machine's minus `package`: dpkg-query
    then truly reports it not installed."""
    folder.mkdir()
    stanzas = Path("/var/lib/dpkg/status").read_text().split("\n\n")
    kept = [s for s in stanzas if not s.startswith(f"Package: {package}\n")]
    assert len(kept) == len(stanzas) - 1, f"{package} is not installed here"
    (folder / "status").write_text("\n\n".join(kept))
    return str(folder)


def test_a_package_start_sh_cannot_install_fails_the_tests_and_warns_the_lab(
    tmp_path: Path,
) -> None:
    dpkg = dpkg_without("valgrind", tmp_path / "dpkg")
    tests = _start(
        "test", "tests/test_template_import.py", JUSTKERNEL_NO_INSTALL="1", DPKG_ADMINDIR=dpkg
    )
    assert tests.returncode != 0, tests.stderr
    assert "package valgrind is missing: needed for the cycle model" in tests.stderr
    assert "ruff check" not in tests.stderr
    lab = _start("--help", JUSTKERNEL_NO_INSTALL="1", DPKG_ADMINDIR=dpkg)
    assert lab.returncode == 0, lab.stderr  # the lab runs without it
    assert "warning:" in lab.stderr and "package valgrind is missing" in lab.stderr
    assert "serve" in lab.stdout


def _preflight(path: str) -> subprocess.CompletedProcess[str]:
    """The preflight start.sh runs, on a machine whose programs are those on `path`."""
    return subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "check", "--require-for-tests"],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_preflight_names_every_missing_capability(tmp_path: Path) -> None:
    done = _preflight(path_without("valgrind", tmp_path / "bin"))
    assert done.returncode == 1, done.stdout
    missing = [line for line in done.stderr.splitlines() if line.startswith("missing:")]
    assert [line.split()[1] for line in missing] == ["valgrind"], done.stderr
    assert "cycle simulation" in missing[0]  # what needs it


def test_preflight_passes_on_this_machine(tmp_path: Path) -> None:
    """The suite's machine has everything: the same preflight start.sh runs says so."""
    done = _preflight(path_without("no-such-tool", tmp_path / "bin"))
    assert done.returncode == 0, done.stderr
    assert "capabilities the test suite needs are present" in done.stdout
