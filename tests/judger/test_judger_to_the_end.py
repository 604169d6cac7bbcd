"""The Judger's work is seen to the end (issue #16, 3): a run whose teams stopped at its time
limit keeps its Judger until every accepted candidate and every submission reached a final
state, a human's decision included; Stop stops everything. On a real local judge over HTTP,
a real store and the real `RunSession`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from justkernel.app import LabRuntime, RunSession
from justkernel.core.reasons import ReasonCode
from justkernel.judger.approvals import decide
from justkernel.judger.settings import JudgerSettings
from justkernel.store.candidates import CandidateStore
from tests.judger.test_judger import _files, _judger, _measured, _sleep
from tests.support.judge import Clock

WAIT = 300.0  # seconds a step may take on a loaded machine before the test gives up


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    try:
        async with asyncio.timeout(WAIT):
            while not await check():
                await _sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"never came: {what}") from None


async def test_a_run_past_its_time_limit_waits_for_the_human_and_the_official_result(
    runtime: LabRuntime, judge_url: tuple[str, str], tmp_path: Path
) -> None:
    """Before: the time limit ended the Judger with the run; the nomination waited for a
    human in a run that had ended, and no official result ever came."""
    run = await runtime.lab.runs.create("judger to the end")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    await scheduler.registry.set_status(run.id, team.id, "done", "test: no turns")
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    files = _files("s1_fused_pass")  # marked: no other test submits this source
    files["op_kernel/cmg_kernel.c"] += f"\n/* judger to the end: {run.id} */\n".encode()
    receipt = await _measured(runtime, files, tmp_path)
    candidate, _new = await store.freeze(run.id, team.id, files, receipt, commit=None)

    clock = Clock(datetime(2033, 3, 4, 5, 0, tzinfo=UTC))  # a day nobody else submits on
    config = JudgerSettings(human_approval=True, poll_seconds=0.2)
    session = RunSession(runtime, run, scheduler)
    session.judger = _judger(runtime, run.id, store, scheduler.board, judge_url, config, clock)
    driving = asyncio.create_task(session.drive(0.05, summarise_stop=True))

    async def awaiting() -> bool:  # the teams' part is over, the Judger's is not
        ended = await runtime.lab.events.read(run.id, kinds=["run.dispatch_stopped"])
        status = (await store.get(run.id, candidate.id)).status
        return bool(ended) and status == "awaiting_approval"

    await _until(awaiting, "the nomination after the time limit")
    stopped = await runtime.lab.events.read(run.id, kinds=["run.dispatch_stopped"])
    assert [e.payload["reason"] for e in stopped] == ["time limit reached"]
    assert not driving.done(), "the run ended while a nomination waited for a human"

    await decide(runtime.lab, store, run.id, candidate.id, "approved", "test")
    async with asyncio.timeout(WAIT):
        reason = await driving
    assert reason.code == ReasonCode.TIME_LIMIT
    assert (await store.get(run.id, candidate.id)).status == "official_pass"
    results = await runtime.lab.events.read(run.id, kinds=["official.result"])
    assert [e.payload["candidate_id"] for e in results] == [candidate.id]
    summary = await runtime.lab.events.read(run.id, kinds=["run.summary"])
    assert len(summary) == 1 and summary[0].seq > results[0].seq  # the end comes after


async def test_stop_ends_a_run_whose_judger_still_waits(
    runtime: LabRuntime, judge_url: tuple[str, str], tmp_path: Path
) -> None:
    """The Stop button means stop everything: a run draining its Judger ends when asked."""
    run = await runtime.lab.runs.create("judger stopped")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    await scheduler.registry.set_status(run.id, team.id, "done", "test: no turns")
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    files = _files("s1_fused_pass")  # never submitted: it waits for a human
    files["op_kernel/cmg_kernel.c"] += f"\n/* judger stopped: {run.id} */\n".encode()
    receipt = await _measured(runtime, files, tmp_path)
    candidate, _new = await store.freeze(run.id, team.id, files, receipt, commit=None)

    clock = Clock(datetime(2033, 3, 5, 5, 0, tzinfo=UTC))
    config = JudgerSettings(human_approval=True, poll_seconds=0.2)
    session = RunSession(runtime, run, scheduler)
    session.judger = _judger(runtime, run.id, store, scheduler.board, judge_url, config, clock)
    driving = asyncio.create_task(session.drive(0.05, summarise_stop=False))

    async def awaiting() -> bool:  # the teams' part is over, the Judger's is not
        ended = await runtime.lab.events.read(run.id, kinds=["run.dispatch_stopped"])
        status = (await store.get(run.id, candidate.id)).status
        return bool(ended) and status == "awaiting_approval"

    await _until(awaiting, "the nomination after the time limit")
    assert not driving.done()
    session.stop.set()
    async with asyncio.timeout(WAIT):
        assert (await driving).code == ReasonCode.TIME_LIMIT
    assert (await store.get(run.id, candidate.id)).status == "awaiting_approval"  # still asks
