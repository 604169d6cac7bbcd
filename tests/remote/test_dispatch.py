"""Dispatch over SSH hosts: work in proportion to slots, and one performance job at a time
per device lane while the other slots keep compiling and checking (from the receipts)."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter

import pytest

from justkernel.core.receipts import Receipt, Status
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.conftest import FAST, evaluator_on, host_for
from tests.remote.sshd import SshServer
from tests.workers.test_evaluator import unique_variant
from tests.workers.test_evaluator_shared import SMALL_CASE, require_tools

pytestmark = pytest.mark.timeout(300)


async def test_hosts_with_one_and_three_slots_get_work_in_proportion(
    sshd: SshServer, shared_scratch: str
) -> None:
    require_tools()
    small = SshExecutor(host_for(sshd, "small", shared_scratch, slots=1), timing=FAST)
    big = SshExecutor(host_for(sshd, "big", shared_scratch, slots=3), timing=FAST)
    ev = evaluator_on([small, big])
    await ev.pool.start()  # both connected before the burst
    assert small.state.up and big.state.up
    try:
        receipts = await asyncio.gather(
            *(
                ev.evaluate(unique_variant(), team=f"t{i % 4}", kind="probe", case_ids=[SMALL_CASE])
                for i in range(16)
            )
        )
    finally:
        await ev.pool.close()
    assert [r.status for r in receipts] == [Status.PROBE_PASSED] * 16
    count = Counter(r.executor.worker for r in receipts)
    assert count["ssh:small"] + count["ssh:big"] == 16
    # 1:3 means 4 and 12; equal jobs on equal slots may drift by a job or two under load
    assert 2 <= count["ssh:small"] <= 6, count
    assert {r.executor.slot for r in receipts if r.executor.worker == "ssh:big"} == {0, 1, 2}


def why(r: Receipt) -> str:
    """A receipt's status with the reason and its failing cases, for an assertion message."""
    cases = [c for c in [*r.cases, *(c.check for c in r.cycles)] if not c.passed]
    return f"{r.status}: {r.detail} {[(c.case_id, c.outcome, c.detail) for c in cases]}"


def overlaps(a: Receipt, b: Receipt) -> bool:
    assert a.started_at and a.finished_at and b.started_at and b.finished_at
    return a.started_at < b.finished_at and b.started_at < a.finished_at


async def test_a_device_lane_never_runs_two_performance_jobs_at_once(
    sshd: SshServer, shared_scratch: str
) -> None:
    require_tools(valgrind=True)
    host = SshExecutor(host_for(sshd, "npu", shared_scratch, slots=3, devices=1), timing=FAST)
    ev = evaluator_on([host])
    try:
        # one full job first, so the host holds every input pack: otherwise the probes' small
        # pack arrives first, all four probes can be done before the first performance job
        # starts, and there is nothing to run beside
        assert (await ev.evaluate(unique_variant(), team="warm")).status == Status.MEASURED
        full = [ev.evaluate(unique_variant(), team=f"perf{i}") for i in range(3)]
        probes = [
            ev.evaluate(unique_variant(), team="probe", kind="probe", case_ids=[SMALL_CASE])
            for _ in range(4)
        ]
        receipts = await asyncio.gather(*full, *probes)
    finally:
        await ev.pool.close()
    perf, checks = receipts[:3], receipts[3:]
    assert [r.status for r in perf] == [Status.MEASURED] * 3, [why(r) for r in perf]
    assert [r.status for r in checks] == [Status.PROBE_PASSED] * 4, [why(r) for r in checks]
    # the lane: no two performance jobs overlap (timestamps written by the host)
    for a, b in itertools.combinations(perf, 2):
        assert not overlaps(a, b), [(r.started_at, r.finished_at) for r in perf]
    # the other slots: compile and functional jobs ran beside the performance jobs
    assert any(overlaps(p, c) for p in perf for c in checks)
