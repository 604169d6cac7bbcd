"""The layer contract in pyproject.toml holds for the code as it is, and breaks when a lower
layer imports a higher one (the check `./start.sh test` runs must be able to fail)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports on `project`'s own src/ with its own pyproject.toml."""
    return subprocess.run(
        [str(LINT_IMPORTS), str(project / "pyproject.toml"), "--no-cache"],
        cwd=project,
        env={"PYTHONPATH": str(project / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def copy_of_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("layers")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    shutil.copytree(
        ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return project


def test_the_layers_hold_for_the_code_as_it_is(copy_of_project: Path) -> None:
    done = _lint(copy_of_project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_store_module_importing_the_web_breaks_the_contract(copy_of_project: Path) -> None:
    store_init = copy_of_project / "src/justkernel/store/__init__.py"
    original = store_init.read_text()
    store_init.write_text(original + "\nimport justkernel.web.app  # noqa: E402,F401\n")
    try:
        done = _lint(copy_of_project)
    finally:
        store_init.write_text(original)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout
    assert "justkernel.store -> justkernel.web.app" in done.stdout


def test_a_toolchain_importing_a_worker_breaks_the_contract(copy_of_project: Path) -> None:
    """Workers sit above toolchains (a worker runs a toolchain): the old cycle cannot return."""
    protocol = copy_of_project / "src/justkernel/toolchains/protocol.py"
    original = protocol.read_text()
    protocol.write_text(original + "\nimport justkernel.workers.cache  # noqa: E402,F401\n")
    try:
        done = _lint(copy_of_project)
    finally:
        protocol.write_text(original)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout
    assert "justkernel.toolchains.protocol -> justkernel.workers.cache" in done.stdout


def test_a_cycle_between_sibling_backends_breaks_the_contract(copy_of_project: Path) -> None:
    """Within one layer the layers contract says nothing; the acyclic contract still refuses a
    cycle between sibling subpackages (ascendc_cpu reuses cpu's checks: cpu may not import it)."""
    cpu_init = copy_of_project / "src/justkernel/toolchains/cpu/__init__.py"
    original = cpu_init.read_text()
    cpu_init.write_text(
        original + "\nimport justkernel.toolchains.ascendc_cpu  # noqa: E402,F401\n"
    )
    try:
        done = _lint(copy_of_project)
    finally:
        cpu_init.write_text(original)
    assert done.returncode != 0
    assert "No import cycle between the subpackages of any package BROKEN" in done.stdout
    assert ".cpu -> .ascendc_cpu" in done.stdout
