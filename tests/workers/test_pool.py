"""The local pool: fair share, priorities, cancellation, device lanes, utilisation."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from justkernel.workers.pool import Job, JobCancelled, LocalPool, Priority, SlotGrant


def _recording_work(log: list[tuple[str, int, float, float]], name: str, seconds: float):
    async def work(grant: SlotGrant) -> str:
        start = time.monotonic()
        await asyncio.sleep(seconds)
        log.append((name, grant.slot, start, time.monotonic()))
        return name

    return work


async def test_sixteen_jobs_from_four_teams_share_two_slots_fairly() -> None:
    pool = LocalPool(slots=2)
    log: list[tuple[str, int, float, float]] = []
    handles = []
    # team a bursts 10 jobs first; b, c, d arrive just after with 2 each
    for i in range(10):
        handles.append(pool.submit(Job("a", _recording_work(log, f"a{i}", 0.03))))
    for team in "bcd":
        for i in range(2):
            handles.append(pool.submit(Job(team, _recording_work(log, f"{team}{i}", 0.03))))
    results = await asyncio.gather(*handles)
    assert len(results) == 16 and len(set(results)) == 16
    order = [name for name, *_ in sorted(log, key=lambda r: r[2])]
    # every other team starts its first job before team a has run 3 of its 10
    a_third = order.index("a2")
    for team in "bcd":
        assert order.index(f"{team}0") < a_third, order
    # and finishes all its jobs before team a's burst is over
    last_a = max(i for i, name in enumerate(order) if name.startswith("a"))
    assert all(order.index(f"{t}1") < last_a for t in "bcd"), order
    # never more than 2 at once
    events = sorted([(s, 1) for *_, s, _ in log] + [(e, -1) for *_, e in log])
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    assert peak <= 2


async def test_full_validation_runs_before_probes() -> None:
    pool = LocalPool(slots=1)
    log: list[tuple[str, int, float, float]] = []
    blocker = pool.submit(Job("x", _recording_work(log, "blocker", 0.05)))
    probes = [
        pool.submit(Job("p", _recording_work(log, f"probe{i}", 0.01), Priority.PROBE))
        for i in range(3)
    ]
    full = pool.submit(Job("f", _recording_work(log, "full", 0.01), Priority.FULL_VALIDATION))
    await asyncio.gather(blocker, full, *probes)
    order = [name for name, *_ in sorted(log, key=lambda r: r[2])]
    assert order[:2] == ["blocker", "full"]


async def test_cancel_queued_and_running_jobs() -> None:
    pool = LocalPool(slots=1)
    started = asyncio.Event()

    async def long(_grant: SlotGrant) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    running = pool.submit(Job("t", long))
    queued = pool.submit(Job("t", long))
    await started.wait()
    assert queued.cancel()
    with pytest.raises(JobCancelled):
        await queued
    assert running.cancel()
    with pytest.raises(JobCancelled):
        await running
    assert pool.running == 0 and pool.queued == 0
    # the slot is free again
    done = pool.submit(Job("t", _recording_work([], "after", 0.0)))
    assert await done == "after"


async def test_device_lane_is_exclusive_while_other_work_flows() -> None:
    pool = LocalPool(slots=3, devices=1)
    log: list[tuple[str, int, float, float]] = []
    perf = [
        pool.submit(Job(f"t{i}", _recording_work(log, f"perf{i}", 0.05), needs_device=True))
        for i in range(3)
    ]
    compiles = [pool.submit(Job("c", _recording_work(log, f"compile{i}", 0.02))) for i in range(4)]
    await asyncio.gather(*perf, *compiles)
    spans = sorted((s, e) for name, _, s, e in log if name.startswith("perf"))
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end, spans
    first_perf_end = spans[0][1]
    compile_starts = [s for name, _, s, _ in log if name.startswith("compile")]
    assert min(compile_starts) < first_perf_end  # compiles did not wait for the device


async def test_errors_propagate_and_utilisation_is_measured() -> None:
    pool = LocalPool(slots=2)

    async def boom(_grant: SlotGrant) -> None:
        raise RuntimeError("compile exploded")

    with pytest.raises(RuntimeError, match="exploded"):
        await pool.submit(Job("t", boom))
    handles = [pool.submit(Job("t", _recording_work([], str(i), 0.05))) for i in range(6)]
    await asyncio.gather(*handles)
    utilisation = pool.stats.utilization(2)
    # measured, and a share of the slots' time (how high: bench/latency.py)
    assert utilisation is not None and 0 < utilisation <= 1.0
    assert pool.stats.completed == 6 and pool.stats.failed == 1


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="slots"):
        LocalPool(slots=0)
