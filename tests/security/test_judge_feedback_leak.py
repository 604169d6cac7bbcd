"""Attack: read the local judge's hidden points back out of its official feedback.

The team's model writes the kernel, so it can make the kernel misbehave on purpose and read
what the Judger forwards. Two channels did it: the exact `error_ratio` (spoil 1, then 5
elements of output0: 1/r is each point's element count) and the exact `time_us` (cycles/1000:
two kernels a few instructions apart read back their cycle difference exactly). The judge now
answers pass/fail, a coarse error bucket for failing points, and times rounded with keyed
noise; its exact figures stay in its own store.
"""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.protocol import CandidateBundle, OfficialResult, SubmissionStatus
from justkernel.judge.hidden_cases import CASES_FILE, HIDDEN_TABLE
from justkernel.judge.public import Publisher
from justkernel.judge.store import JudgeStore
from justkernel.judger.feedback import point_feedback
from justkernel.operators import load_case_file, load_operator
from tests.support.judge import RunningJudge, new_judge_dir, project, running_judge
from tests.workers.test_evaluator_shared import require_tools

pytestmark = pytest.mark.timeout(900)

SPOILED = 5  # the second submission spoils this many elements of output0
END_OF_PASS_2 = (
    "    for (int64_t o = 0; o < t->out1_size; o++) {\n        store(out1, o, dt, acc[o]);\n    }\n"
)


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJudge]:
    require_tools(valgrind=True)
    with running_judge(new_judge_dir(tmp_path_factory.mktemp("leak"))) as running:
        yield running


def kernel_with(extra: str) -> CandidateBundle:
    """The baseline kernel (a fresh source) with `extra` C code after its last pass."""
    definition = load_operator()
    folder = project(unique=True)
    kernel = folder / definition.build.kernel_source
    text = kernel.read_text()
    assert END_OF_PASS_2 in text
    kernel.write_text(text.replace(END_OF_PASS_2, END_OF_PASS_2 + extra))
    return CandidateBundle.from_project(folder, definition, toolchain="cpu")


def spoiling(count: int) -> CandidateBundle:
    return kernel_with(
        f"    for (int64_t i = 0; i < {count} && i < t->out0_size; i++) {{\n"
        "        store(out0, i, dt, load(out0, i, dt) + 1000.0);\n    }\n"
    )


async def judged(judge: RunningJudge, candidate: CandidateBundle) -> OfficialResult:
    async with local_judge_client(judge.judge_dir) as client:
        sid = await client.submit(candidate)
        return await client.wait(sid, max_seconds=600, poll_seconds=0.5)


def output0_elements(judge: RunningJudge) -> dict[str, int]:
    """What the attacker is after (read here from the judge folder, which teams never see)."""
    cases = load_case_file(judge.judge_dir / CASES_FILE)[HIDDEN_TABLE]
    return {c.id: math.prod(np.broadcast_shapes(c.shapes[0], c.shapes[1])) for c in cases}


def element_counts(one: list[dict[str, Any]], many: list[dict[str, Any]]) -> dict[str, int]:
    """The attacker's reading: a point whose ratios are 1/N and 5/N (or both 1: N = 1) has N
    elements. Only numeric ratios can be read this way; a bucket label cannot."""
    counts = {}
    for a, b in zip(one, many, strict=True):
        r1, r5 = a.get("error_ratio"), b.get("error_ratio")
        if not (isinstance(r1, float) and isinstance(r5, float) and r1 > 0):
            continue
        n = round(1 / r1)
        if math.isclose(r5, min(1.0, SPOILED / n), rel_tol=1e-9):
            counts[a["id"]] = n
    return counts


async def test_spoiling_one_then_five_elements_does_not_reveal_the_element_counts(
    judge: RunningJudge,
) -> None:
    one = point_feedback(await judged(judge, spoiling(1)))
    five = point_feedback(await judged(judge, spoiling(SPOILED)))
    recovered = element_counts(one, five)
    truth = output0_elements(judge)
    leaked = {p: n for p, n in recovered.items() if truth[p] == n}
    assert not leaked, f"the feedback gives away output0's element count of {leaked}"
    for a, b in zip(one, five, strict=True):
        assert a.get("error_ratio") is None and b.get("error_ratio") is None
        if a["passed"] and b["passed"]:  # a passing point says nothing about its errors
            assert a.get("error_bucket") is None and b.get("error_bucket") is None
        elif not a["passed"] and not b["passed"]:  # 1 and 5 spoiled: the same coarse bucket
            assert a["error_bucket"] == b["error_bucket"]


async def test_a_few_cycles_more_cannot_be_read_back_from_the_times(judge: RunningJudge) -> None:
    # the same kernel, then with a few instructions more (one element of output1 stored twice)
    first = await judged(judge, kernel_with("    /* nothing more */\n"))
    second = await judged(
        judge, kernel_with("    if (t->out1_size > 0) store(out1, 0, dt, acc[0]);\n")
    )
    assert first.passed and second.passed, (first.raw, second.raw)
    mine_1, mine_2 = point_feedback(first), point_feedback(second)
    store = JudgeStore(judge.judge_dir / "judge.db")  # the judge operator's own figures
    try:
        exact_1 = store.get(first.submission_id).result  # type: ignore[union-attr]
        exact_2 = store.get(second.submission_id).result  # type: ignore[union-attr]
    finally:
        store.close()
    assert exact_1 is not None and exact_2 is not None
    read_back, exact = {}, {}
    for a, b, ea, eb in zip(mine_1, mine_2, exact_1["points"], exact_2["points"], strict=True):
        assert a["time_us"] is not None and ea["time_us"] is not None
        assert a["time_us"] != ea["time_us"]  # the team never sees the exact time
        assert abs(a["time_us"] / ea["time_us"] - 1) <= 0.003  # within the documented bound
        read_back[a["id"]] = round((b["time_us"] - a["time_us"]) * 1000)
        exact[a["id"]] = round((eb["time_us"] - ea["time_us"]) * 1000)
    same = [p for p in exact if read_back[p] == exact[p]]
    assert len(same) <= 1, f"the cycle differences read back exactly on {same}: {exact}"
    # the same source, the same answer: asking again changes nothing
    async with local_judge_client(judge.judge_dir) as client:
        again = await client.result(first.submission_id)
    assert again.status is SubmissionStatus.FINISHED
    assert point_feedback(again) == mine_1 and again.prof_sum_us == first.prof_sum_us


def test_a_kernel_one_percent_faster_always_reads_faster() -> None:
    """The noise must not undo the ranking the Judger's state of the art rests on."""
    rng = random.Random(11)
    publisher = Publisher(secrets.token_bytes(32))
    points = [f"h{i:02d}" for i in range(1, 16)]
    for trial in range(2000):
        champion = {p: rng.uniform(50, 50_000) for p in points}
        # 1% faster overall, unevenly: some points faster, some slower
        shares = {p: rng.uniform(0.9, 1.1) for p in points}
        scale = 0.99 * sum(champion.values()) / sum(champion[p] * shares[p] for p in points)
        challenger = {p: champion[p] * shares[p] * scale for p in points}

        def published(times: dict[str, float], source: str) -> float:
            exact = {
                "points": [{"id": p, "passed": True, "time_us": t} for p, t in times.items()],
                "prof_sum_us": sum(times.values()),
            }
            return publisher.result(exact, source)["prof_sum_us"]

        assert published(challenger, f"b{trial}") < published(champion, f"a{trial}")
