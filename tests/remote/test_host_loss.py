"""Killing the SSH server mid-job: the job is re-queued and completes exactly once; the host
is marked down, probed, and back up when the server returns; the receipt the host finished
anyway is kept as history and never counted."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.workers.cache import ReceiptCache
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.conftest import FAST, evaluator_on, host_for
from tests.remote.sshd import SshServer
from tests.workers.test_evaluator import unique_variant
from tests.workers.test_evaluator_shared import require_tools, shared_settings, toolchain

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def own_sshd(remote_root: Path) -> Iterator[SshServer]:
    """A server this test may kill."""
    folder = remote_root / f"sshd-{time.monotonic_ns()}"
    folder.mkdir()
    server = SshServer(folder)
    server.start()
    yield server
    server.stop()


async def until(predicate, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.1)
    return predicate()


async def test_a_killed_ssh_server_requeues_the_job_once_and_the_host_comes_back(
    own_sshd: SshServer, shared_scratch: str
) -> None:
    require_tools()
    cache = ReceiptCache(shared_settings().resolved_data_dir / "receipts")
    host = SshExecutor(host_for(own_sshd, "flaky", shared_scratch), timing=FAST, cache=cache)
    local = LocalExecutor(toolchain(), slots=1)
    ev = evaluator_on([host, local])  # the host comes first: the job starts there
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if line.startswith("case ") and len([x for x in lines if x.startswith("case ")]) == 1:
            own_sshd.kill()  # mid-job: the host has compiled and started the cases

    try:
        src = unique_variant(None)  # the naive kernel: the cases take a while
        receipt = await ev.evaluate(src, team="t", kind="probe", progress=progress)

        # completed exactly once, elsewhere
        assert receipt.status is Status.PROBE_PASSED and receipt.executor.worker == "local"
        stats = ev.pool.stats
        assert (stats.completed, stats.failed, stats.requeued) == (1, 0, 1)
        assert stats.completed_by_site == {"local": 1}
        assert any(line.startswith("re-queued: host flaky: lost while running") for line in lines)
        # the host is down, and says why
        assert not host.state.up and "connection lost" in (host.state.cause or "").lower()
        assert host.state.error  # the latest probe's failure: the server is still gone
        assert host.lost_jobs and not host.leases.held()

        # the server returns: the probe brings the host back up
        own_sshd.start()
        assert await until(lambda: host.state.up, 60), host.state
        # the receipt the host finished after it was given up is history, not a result
        assert await until(lambda: bool(host.late.entries), 60)
        late = host.late.entries[0]
        assert late["host"] == "flaky" and late["counted_elsewhere"] is True
        assert late["receipt"]["job_key"] == receipt.job_key
        assert late["receipt"]["executor"]["worker"] == "ssh:flaky"
        assert not host.lost_jobs
        stored = ev.cache.get(receipt.job_key)
        assert stored is not None and stored.executor.worker == "local"  # not replaced
        assert (stats.completed, stats.requeued) == (1, 1)  # never counted twice

        # and it takes work again
        again = await ev.evaluate(unique_variant(), kind="probe", case_ids=["c01_row_f32"])
        assert again.executor.worker == "ssh:flaky"
    finally:
        await ev.pool.close()


async def test_a_host_that_stops_answering_loses_its_lease_and_the_job_moves(
    sshd: SshServer, shared_scratch: str
) -> None:
    """The connection stays up but the worker freezes (SIGSTOP): no heartbeat renews the lease,
    so the job is re-queued when the lease expires, without waiting for TCP to notice."""
    require_tools()
    timing = dataclasses.replace(FAST, lease_seconds=4.0)
    host = SshExecutor(host_for(sshd, "frozen", shared_scratch), timing=timing)
    ev = evaluator_on([host, LocalExecutor(toolchain(), slots=1)])
    frozen: list[int] = []
    changes: list[tuple[bool, str | None]] = []
    host.on_state_change(lambda: changes.append((host.state.up, host.state.cause)))

    def progress(line: str) -> None:
        if line.startswith("case ") and not frozen and host.hello is not None:
            frozen.append(host.hello["pid"])
            os.kill(frozen[0], signal.SIGSTOP)

    try:
        receipt = await ev.evaluate(unique_variant(None), kind="probe", progress=progress)
        assert frozen and receipt.executor.worker == "local"
        down = [cause for up, cause in changes if not up]
        assert down and down[0].startswith("no heartbeat for 4s"), changes
        assert ev.pool.stats.requeued == 1 and ev.pool.stats.completed == 1
        os.kill(frozen[0], signal.SIGCONT)  # it wakes up, finishes, and its receipt is history
        assert await until(lambda: host.state.up, 60), host.state
        assert await until(lambda: bool(host.late.entries), 60)
        assert host.late.entries[0]["receipt"]["job_key"] == receipt.job_key
    finally:
        if frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(frozen[0], signal.SIGCONT)
        await ev.pool.close()
