"""A lab whose data folder sits under a private (0700) parent evaluates kernels.

Finding (issue 11, finding 11): a root user who cloned into /root (0700) could evaluate
nothing; every job failed with "sandbox uid cannot traverse /root (mode 0700)". /root and
`mktemp -d` folders are 0700, Ubuntu homes 0750, and containers run as root. The lab must
stage the sandbox's folders itself, not ask the user to open their home. Here the data folder
is inside a fresh `mkdtemp()` folder (0700), the whole lab pipeline runs (packs, snapshot,
compile, cases), and the parent keeps its mode. The folder the lab stages in instead is its
own: one another local user made first is refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.operators import load_operator
from justkernel.settings.config import Settings
from justkernel.toolchains.sandbox import SandboxSetupError
from justkernel.toolchains.sandbox.stage import staging_root
from tests.workers.test_evaluator_shared import SMALL_CASE, evaluator, require_tools

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def private_home() -> Iterator[Path]:
    """A folder only its owner may enter, as /root or a `mktemp -d` folder is."""
    home = Path(tempfile.mkdtemp(prefix="jk-private-home-"))
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    yield home
    shutil.rmtree(home, ignore_errors=True)


async def test_a_data_folder_under_a_0700_parent_evaluates_a_kernel(private_home: Path) -> None:
    require_tools()
    project = private_home / "clone" / "project"
    shutil.copytree(load_operator().project_dir, project, ignore=shutil.ignore_patterns("build"))
    settings = Settings(data_dir=private_home / "clone" / ".justkernel", config_dir=private_home)
    ev = evaluator(settings=settings)
    try:
        receipt = await ev.evaluate(project, kind="probe", case_ids=[SMALL_CASE])
    finally:
        await ev.pool.close()
    assert receipt.status is Status.PROBE_PASSED, receipt.detail
    assert receipt.cases[0].passed
    assert stat.S_IMODE(os.stat(private_home).st_mode) == 0o700  # nobody had to open it


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's folder needs root")
def test_a_staging_folder_another_user_created_first_is_refused(private_home: Path) -> None:
    # A local user who creates the lab's staging folder first (or a symlink in its place)
    # would read or swap every input the lab stages; the lab refuses it and says why.
    parent = private_home / "tmp"
    parent.mkdir()
    parent.chmod(0o1777)  # like /var/tmp and /tmp
    squatted = parent / f"justkernel-sandbox-{os.geteuid()}"
    squatted.mkdir()
    os.chown(squatted, 65534, 65534)
    with pytest.raises(SandboxSetupError, match="belongs to uid 65534, not to the lab"):
        staging_root(parent)
    squatted.rmdir()
    elsewhere = private_home / "attacker"
    elsewhere.mkdir()
    squatted.symlink_to(elsewhere)
    with pytest.raises(SandboxSetupError, match="is not a folder"):
        staging_root(parent)
    assert list(elsewhere.iterdir()) == []  # nothing was staged through the link
    squatted.unlink()
    squatted.mkdir(mode=0o777)
    squatted.chmod(0o777)
    with pytest.raises(SandboxSetupError, match="writable by others"):
        staging_root(parent)
    squatted.rmdir()
    made = staging_root(parent)  # nobody was first: the lab makes its own
    assert made == squatted and stat.S_IMODE(os.lstat(made).st_mode) == 0o711
    assert os.lstat(made).st_uid == os.geteuid()
