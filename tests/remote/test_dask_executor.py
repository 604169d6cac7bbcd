"""The Dask executor against a real LocalCluster on loopback: the same receipts and cache as
local jobs, and a worker killed mid-job is Dask's to retry: the job completes once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from justkernel.core.receipts import Status
from justkernel.workers.dask.executor import DaskExecutor
from justkernel.workers.local_executor import LocalExecutor
from tests.remote.conftest import evaluator_on
from tests.remote.sshd import free_port, open_folder
from tests.remote.test_ssh_executor import outcome
from tests.workers.test_evaluator import unique_variant
from tests.workers.test_evaluator_shared import SMALL_CASE, evaluator, require_tools, toolchain

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        resources={"device": 1},
        host="127.0.0.1",
        dashboard_address=":0",
    ) as running:
        yield running


@pytest.fixture
def scratch() -> str:
    return str(open_folder("jk-dask-"))


async def test_a_dask_job_gives_the_same_receipt_and_shares_the_cache(
    cluster: Any, scratch: str
) -> None:
    require_tools()
    src = unique_variant()
    cases = ["c01_row_f32", SMALL_CASE]
    local = evaluator(slots=1)
    try:
        here = await local.evaluate(src, kind="probe", case_ids=cases)
    finally:
        await local.pool.close()
    local.cache.path(here.job_key).unlink()

    executor = DaskExecutor(address=cluster.scheduler_address, slots=2, scratch=scratch)
    ev = evaluator_on([executor])
    try:
        await ev.pool.start()
        assert executor.state.up and executor.offers == {("cpu", here.executor.toolchain_version)}
        there = await ev.evaluate(src, kind="probe", case_ids=cases)  # packs shipped as bytes
    finally:
        await ev.pool.close()
    assert not there.cache_hit and there.executor.worker.startswith("dask:tcp://127.0.0.1:")
    assert outcome(there) == outcome(here)
    assert all(ev.blobs.has(ref.sha256) for ref in there.all_logs())
    assert (Path(scratch) / "packs" / f"{here.input_packs['local']}.complete").is_file()
    stored = ev.cache.get(here.job_key)  # the Dask receipt now answers a local request
    assert stored is not None and stored.executor.worker == there.executor.worker


async def test_a_worker_killed_mid_job_is_retried_by_dask_and_the_job_completes_once(
    cluster: Any, scratch: str
) -> None:
    require_tools()
    executor = DaskExecutor(
        address=cluster.scheduler_address, slots=1, scratch=scratch, shared_packs=True
    )
    ev = evaluator_on([executor])
    await ev.pool.start()
    client = executor.client
    killed: list[str] = []

    async def kill_the_worker_running_it() -> None:
        jobs = Path(scratch) / "jobs"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the task has started its cases on a worker
            if jobs.is_dir() and any((d / "work" / "cases").is_dir() for d in jobs.iterdir()):
                break
            await asyncio.sleep(0.05)
        processing = await client.processing()
        address = next(a for a, keys in processing.items() if keys)
        pids = await client.run(os.getpid, workers=[address])
        os.kill(pids[address], signal.SIGKILL)
        killed.append(address)

    try:
        killer = asyncio.create_task(kill_the_worker_running_it())
        receipt = await ev.evaluate(unique_variant(None), kind="probe")  # naive: cases take time
        await killer
    finally:
        await ev.pool.close()
    assert killed, "the job finished before a worker could be killed"
    assert receipt.status is Status.PROBE_PASSED
    assert receipt.executor.worker != f"dask:{killed[0]}"  # finished by another worker
    stats = ev.pool.stats
    assert (stats.completed, stats.failed, stats.requeued) == (1, 0, 0)  # Dask retried it
    assert ev.cache.get(receipt.job_key) is not None


async def test_a_cluster_that_does_not_answer_is_down_and_the_job_runs_elsewhere(
    scratch: str,
) -> None:
    require_tools()
    address = f"tcp://127.0.0.1:{free_port()}"
    gone = DaskExecutor(address=address, connect_seconds=2, scratch=scratch)
    ev = evaluator_on([gone, LocalExecutor(toolchain(), slots=1)])
    lines: list[str] = []
    try:
        receipt = await ev.evaluate(
            unique_variant(), kind="probe", case_ids=[SMALL_CASE], progress=lines.append
        )
    finally:
        await ev.pool.close()
    assert receipt.status is Status.PROBE_PASSED and receipt.executor.worker == "local"
    assert not gone.state.up and "cannot use the Dask cluster" in (gone.state.cause or "")
    assert any(line.startswith("re-queued: host dask: ") for line in lines), lines
