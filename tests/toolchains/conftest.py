"""Fixtures for the sandbox tests: hostile programs compiled once, world-traversable folders.

The sandbox stages every run's folders itself (so a private parent such as pytest's
/tmp/pytest-of-root, mode 0700, works: `test_sandbox_api`); these folders are world-readable
all the same, so staging hard-links the programs and a test can find a survivor by its inode.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from justkernel.toolchains.sandbox import SandboxUnavailable, find_tools

HOSTILE_SRC = Path(__file__).parent.parent / "fixtures" / "hostile"


@pytest.fixture(scope="session")
def sandbox_root() -> Iterator[Path]:
    """A session folder the sandbox uid can reach; removed at the end."""
    try:
        find_tools()
    except SandboxUnavailable as e:
        pytest.skip(str(e))
    root = Path(tempfile.mkdtemp(prefix="jk-sandbox-tests-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def hostile_bin(sandbox_root: Path) -> Path:
    """Folder with every tests/fixtures/hostile/*.c compiled (bound read-only as /sandbox/bin)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not installed")
    out = sandbox_root / "bin"
    out.mkdir(mode=0o755)
    procs = [
        subprocess.Popen([gcc, "-O1", "-g", "-o", str(out / src.stem), str(src)])
        for src in sorted(HOSTILE_SRC.glob("*.c"))
    ]
    assert all(p.wait() == 0 for p in procs), "a hostile fixture did not compile"
    return out


@pytest.fixture
def work(sandbox_root: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh per-test folder holding `in/` (read-only input) and `out/` (the output)."""
    d = Path(tempfile.mkdtemp(prefix=f"{request.node.name[:40]}-", dir=sandbox_root))
    d.chmod(0o755)
    (d / "in").mkdir(mode=0o755)
    (d / "out").mkdir(mode=0o755)
    return d
