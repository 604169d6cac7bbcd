"""The SSH executor against a real OpenSSH server on loopback: same receipts as local, one
cache for both, packs uploaded once."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from justkernel.core.receipts import Receipt, Status
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.conftest import FAST, evaluator_on, host_for
from tests.remote.sshd import SshServer, open_folder
from tests.workers.test_evaluator import unique_variant
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    evaluator,
    make_project,
    require_tools,
)

pytestmark = pytest.mark.timeout(240)


def outcome(receipt: Receipt) -> dict[str, object]:
    """What a candidate earned, without where, when and how long."""
    return {
        "status": receipt.status,
        "job_key": receipt.job_key,
        "cases": [c.model_dump(exclude={"wall_seconds", "cpu_seconds"}) for c in receipt.cases],
        "cycles": [
            (c.case_id, c.est_cycles, c.counters, c.check.outcome, c.check.outputs)
            for c in receipt.cycles
        ],
        "total": receipt.total_est_cycles,
    }


async def test_a_remote_full_job_has_the_same_cycles_and_cases_as_a_local_one(
    sshd: SshServer, shared_scratch: str
) -> None:
    require_tools(valgrind=True)
    src = unique_variant()
    local = evaluator(slots=1)
    try:
        here = await local.evaluate(src, team="here")
    finally:
        await local.pool.close()
    assert here.status is Status.MEASURED and here.executor.worker == "local"
    local.cache.path(here.job_key).unlink()  # forget it: the remote host must really run it

    remote = evaluator_on([SshExecutor(host_for(sshd, "loop", shared_scratch), timing=FAST)])
    lines: list[str] = []
    try:
        there = await remote.evaluate(src, team="there", progress=lines.append)
        assert not there.cache_hit
        # the receipt names the host and the toolchain it used
        assert there.executor.worker == "ssh:loop" and there.executor.host == socket.gethostname()
        assert there.executor.toolchain_version == here.executor.toolchain_version
        assert there.executor.gcc == here.executor.gcc and there.executor.valgrind
        assert outcome(there) == outcome(here)
        assert there.total_est_cycles is not None and there.total_est_cycles > 0
        # its log lines were streamed while it ran, and its logs are in the blob store
        assert "compile" in lines and any(line.startswith("simulate ") for line in lines)
        assert all(remote.blobs.has(ref.sha256) for ref in there.all_logs())
        # one cache for both: the remote result answers a local request
        later = evaluator(slots=1)
        again = await later.evaluate(src, team="later")
        await later.pool.close()
        assert again.cache_hit and again.executor.worker == "ssh:loop"
    finally:
        await remote.pool.close()


async def test_the_input_pack_crosses_the_wire_once_for_many_jobs(sshd: SshServer) -> None:
    require_tools()
    scratch = open_folder("jk-scratch-")
    host = host_for(sshd, "fresh", str(scratch), slots=2)
    first = SshExecutor(host, timing=FAST)
    ev = evaluator_on([first])
    try:
        receipts = await asyncio.gather(
            *(
                ev.evaluate(unique_variant(), team=f"t{i}", kind="probe", case_ids=[SMALL_CASE])
                for i in range(4)
            )
        )
    finally:
        await ev.pool.close()
    assert [r.status for r in receipts] == [Status.PROBE_PASSED] * 4
    assert {r.executor.slot for r in receipts} == {0, 1}
    assert first.pack_uploads == 1  # four jobs, one upload
    pack = receipts[0].input_packs["local"]
    assert (scratch / "packs" / f"{pack}.complete").is_file()
    assert not [p for p in (scratch / "packs").iterdir() if p.name.startswith(".upload-")]
    assert not list((scratch / "jobs").iterdir())  # finished jobs leave nothing behind

    # a new lab process finds the pack by its marker and uploads nothing
    second = SshExecutor(host, timing=FAST)
    ev = evaluator_on([second])
    try:
        r = await ev.evaluate(unique_variant(), kind="probe", case_ids=[SMALL_CASE])
    finally:
        await ev.pool.close()
    assert r.status is Status.PROBE_PASSED and second.pack_uploads == 0


async def test_a_host_without_the_package_runs_the_shipped_worker_bundle(
    sshd: SshServer, shared_scratch: str
) -> None:
    require_tools()
    # `python -I`: no PYTHONPATH, no user site; the bundle's own code goes first on sys.path
    host = host_for(sshd, "bare", shared_scratch, bundle_python=f"{sys.executable} -I")
    executor = SshExecutor(host, timing=FAST)
    ev = evaluator_on([executor])
    try:
        r = await ev.evaluate(unique_variant(), kind="probe", case_ids=[SMALL_CASE])
    finally:
        await ev.pool.close()
    assert r.status is Status.PROBE_PASSED and r.executor.worker == "ssh:bare"
    assert executor.hello is not None
    assert executor.hello["code"].startswith(f"{shared_scratch}/bundles/")
    assert r.executor.toolchain_version == ev.toolchain.version  # the same code, the same key


async def test_cancelling_a_remote_job_stops_it_on_the_host(
    sshd: SshServer, shared_scratch: str
) -> None:
    require_tools()
    executor = SshExecutor(host_for(sshd, "cancel", shared_scratch), timing=FAST)
    ev = evaluator_on([executor])
    running = asyncio.Event()

    def progress(line: str) -> None:
        if line.startswith("case "):
            running.set()

    src = make_project(hostile="endless_loop")
    jobs = Path(shared_scratch) / "jobs"
    before = set(await asyncio.to_thread(lambda: [p.name for p in jobs.glob("*")]))
    task = asyncio.create_task(
        ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE], progress=progress)
    )
    try:
        await asyncio.wait_for(running.wait(), 120)
        names = set(await asyncio.to_thread(lambda: [p.name for p in jobs.iterdir()])) - before
        assert names, "the job has no folder on the host"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ev.pool.stats.cancelled == 1 and ev.pool.running == 0
        for _ in range(200):  # the host killed the sandbox and removed the job's folder
            left = await asyncio.to_thread(lambda: {p.name for p in jobs.iterdir()})
            if not names & left:
                break
            await asyncio.sleep(0.1)
        assert not names & left
        assert executor.state.up  # a cancelled job is not a lost host
    finally:
        await ev.pool.close()
