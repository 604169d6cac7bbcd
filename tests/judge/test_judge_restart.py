"""A judge restart loses nothing: finished results and best times stay, a submission that was
running when the judge was killed is evaluated after the restart, and a client whose session
died with the old process logs in again by itself."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.protocol import SubmissionStatus
from tests.support.judge import bundle, new_judge_dir, running_judge, start_judge
from tests.workers.test_evaluator_shared import require_tools

pytestmark = pytest.mark.timeout(420)


async def test_results_and_best_times_survive_a_restart(tmp_path: Path) -> None:
    require_tools(valgrind=True)
    judge_dir = new_judge_dir(tmp_path)
    with running_judge(judge_dir) as first:
        client = local_judge_client(judge_dir)
        fast_id = await client.submit(bundle("fast_fused_blocked"))
        fast = await client.wait(fast_id, max_seconds=300, poll_seconds=0.3)
        assert fast.passed and fast.prof_sum_us is not None
        assert client.logins == 1
    with running_judge(judge_dir, port=first.port):  # same address, new process
        again = await client.result(fast_id)  # same client: its session died with the judge
        assert client.logins == 2
        assert again.points == fast.points and again.prof_sum_us == fast.prof_sum_us
        assert again.raw["finished_at"] == fast.raw["finished_at"]
        base_id = await client.submit(bundle())
        base = await client.wait(base_id, max_seconds=300, poll_seconds=0.3)
        await client.aclose()
    assert base.passed
    fast_times = {p.id: p.time_us for p in fast.points}
    for p in base.points:
        assert p.time_us is not None and p.time_us > fast_times[p.id]  # the baseline is slower
        assert p.best_time_us == fast_times[p.id]  # the best, from before the restart


async def test_a_submission_cut_off_by_a_kill_is_evaluated_after_the_restart(
    tmp_path: Path,
) -> None:
    require_tools(valgrind=True)
    judge_dir = new_judge_dir(tmp_path)
    candidate = bundle(unique=True)  # a new source: a real evaluation, several seconds long
    judge = start_judge(judge_dir)
    try:
        async with local_judge_client(judge_dir) as client:
            sid = await client.submit(candidate)
            deadline = time.monotonic() + 120
            while (await client.result(sid)).status is not SubmissionStatus.RUNNING:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
    finally:
        judge.stop(signal.SIGKILL)  # mid-evaluation, no chance to clean up
    with running_judge(judge_dir):
        async with local_judge_client(judge_dir) as client:
            result = await client.wait(sid, max_seconds=300, poll_seconds=0.3)
    assert result.status is SubmissionStatus.FINISHED and result.passed
    assert result.raw["source_sha256"] == candidate.source_sha256
    assert result.raw["started_at"] is not None and result.prof_sum_us is not None
