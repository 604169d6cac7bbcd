"""The ascendc-cpu toolchain on an SSH worker, unchanged: a host offering it (here one without
the package, running the shipped bundle, which carries the Ascend C library) runs the job the
lab's registry names, with the lab's toolchain version."""

from __future__ import annotations

import sys

import pytest

from justkernel.core.receipts import Status
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import WorkerPool
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.conftest import FAST, host_for
from tests.remote.sshd import SshServer
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import copy_template
from tests.workers.test_evaluator_shared import SMALL_CASE, own_settings

pytestmark = pytest.mark.timeout(240)


async def test_an_ssh_host_runs_ascendc_cpu_jobs_from_the_bundle(
    sshd: SshServer, shared_scratch: str
) -> None:
    tc = toolchain()
    host = host_for(
        sshd,
        "ascendc",
        shared_scratch,
        toolchain="ascendc-cpu",
        bundle_python=f"{sys.executable} -I",
    )
    executor = SshExecutor(host, timing=FAST)
    settings: Settings = own_settings("ssh-ascendc")  # no cached receipt: the host must run it
    ev = Evaluator(settings, WorkerPool([executor]), tc, BlobStore(settings.blobs_dir))
    try:
        r = await ev.evaluate(copy_template("ssh-ascendc"), kind="probe", case_ids=[SMALL_CASE])
    finally:
        await ev.pool.close()
    assert r.status is Status.PROBE_PASSED, r.detail
    assert r.executor.worker == "ssh:ascendc" and r.executor.toolchain_id == "ascendc-cpu"
    assert r.executor.toolchain_version == tc.version  # the bundle's library is the lab's
    assert executor.hello is not None
    assert executor.hello["toolchain"]["id"] == "ascendc-cpu"
    assert [c.case_id for c in r.cases] == [SMALL_CASE] and r.cases[0].passed
