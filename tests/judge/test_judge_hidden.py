"""The local judge on its hidden points, over real HTTP with the real toolchain: the baseline
passes all 15 with times; a kernel specialised to the local shapes passes the 15 local cases
in the lab but fails the hidden points; responses never carry a hidden shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.protocol import CandidateBundle, OfficialResult, SubmissionStatus
from justkernel.judge.hidden_cases import (
    CASES_FILE,
    HIDDEN_TABLE,
    MAX_POINT_ELEMENTS,
    generate_hidden_cases,
    local_extents,
    point_ids,
)
from justkernel.operators import CaseSpec, load_case_file, load_operator, local_cases
from tests.support.judge import (
    RunningJudge,
    bundle,
    new_judge_dir,
    project,
    running_judge,
    template_folder,
)
from tests.workers.test_evaluator_shared import evaluator, require_tools

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJudge]:
    require_tools(valgrind=True)
    with running_judge(new_judge_dir(tmp_path_factory.mktemp("hidden"))) as running:
        yield running


def hidden_cases() -> tuple[CaseSpec, ...]:
    return load_case_file(template_folder() / CASES_FILE)[HIDDEN_TABLE]


async def submit_and_wait(judge: RunningJudge, candidate: CandidateBundle) -> OfficialResult:
    async with local_judge_client(judge.judge_dir) as client:
        sid = await client.submit(candidate)
        return await client.wait(sid, max_seconds=240, poll_seconds=0.3)


def assert_no_hidden_shape(raw: object) -> None:
    """No hidden shape, extent list or input seed appears anywhere in a response."""
    text = json.dumps(raw)
    for case in hidden_cases():
        assert str(case.seed) not in text
        for shape in case.shapes:
            if len(shape) > 1:
                assert json.dumps(list(shape)) not in text, shape
                assert ", ".join(map(str, shape)) not in text, shape


def test_hidden_points_differ_from_the_local_cases() -> None:
    hidden = hidden_cases()
    local = local_cases(load_operator())
    assert tuple(c.id for c in hidden) == point_ids() == tuple(f"h{i:02d}" for i in range(1, 16))
    assert not {c.shapes for c in hidden} & {c.shapes for c in local}
    used = {n for c in hidden for s in c.shapes for n in s if n > 1}
    assert not used & local_extents(local)  # no row of 1023, no c05 extent, nothing local
    assert {c.dtype for c in hidden} == {"float32", "float16"}
    patterns = {(*(len(s) for s in c.shapes), c.input0 == c.input2) for c in hidden}
    assert len(patterns) >= 6  # ranks and broadcast patterns vary
    # any seed: every point within the size budget; the same seed, the same points
    for seed in range(100):
        drawn = generate_hidden_cases(seed, local)
        assert max(c.elements for c in drawn) <= MAX_POINT_ELEMENTS
        assert not {n for c in drawn for s in c.shapes for n in s if n > 1} & local_extents(local)
    assert generate_hidden_cases(1, local) == generate_hidden_cases(1, local)
    assert generate_hidden_cases(1, local) != generate_hidden_cases(2, local)


async def test_the_baseline_passes_every_hidden_point_with_times(judge: RunningJudge) -> None:
    candidate = bundle(team="blue", candidate_id="baseline")
    result = await submit_and_wait(judge, candidate)
    assert result.status is SubmissionStatus.FINISHED, result.raw
    assert result.passed
    assert [p.id for p in result.points] == list(point_ids())
    for p in result.points:
        assert p.passed and p.outcome == "passed"
        assert p.error_ratio is None and p.error_bucket is None  # a pass says nothing more
        assert p.time_us is not None and p.time_us > 0
        assert p.best_time_us is not None and p.best_time_us <= p.time_us
    times = [p.time_us for p in result.points if p.time_us is not None]
    assert result.prof_sum_us == pytest.approx(sum(times), rel=1e-3)  # rounded
    raw = result.raw
    assert raw["time_source"].startswith("cycle-model")
    assert raw["source_sha256"] == candidate.source_sha256
    assert raw["evaluation"]["source_sha256"] == candidate.source_sha256
    assert raw["client"] == {"team": "blue", "candidate_id": "baseline", "note": ""}
    assert_no_hidden_shape(raw)


async def test_a_shape_specialised_kernel_passes_locally_and_fails_the_hidden_points(
    judge: RunningJudge,
) -> None:
    folder = project("specialised_kernel")
    ev = evaluator(slots=1)
    try:
        local = await ev.evaluate(folder, team="cheat", kind="probe", case_ids=ev.local_case_ids())
    finally:
        await ev.pool.close()
    assert local.status is Status.PROBE_PASSED, local.detail
    assert len(local.cases) == 15 and all(c.passed for c in local.cases)

    result = await submit_and_wait(
        judge, CandidateBundle.from_project(folder, load_operator(), toolchain="cpu")
    )
    assert result.status is SubmissionStatus.FINISHED
    assert not result.passed
    failed = [p for p in result.points if not p.passed]
    assert len(failed) == 15  # output1 is garbage on every shape it was not tuned for
    for p in failed:
        assert p.outcome == "incorrect"
        assert p.error_ratio is None and p.error_bucket == ">=50%"
        assert p.time_us is None  # not measured: a failing candidate is not simulated
    assert result.prof_sum_us is None
    assert result.raw["verdict"] == "fail"
    assert_no_hidden_shape(result.raw)


async def test_a_compile_error_fails_every_point_with_diagnostics(judge: RunningJudge) -> None:
    folder = project(unique=True)
    kernel = folder / "op_kernel" / "cmg_kernel.c"
    kernel.write_text(kernel.read_text() + "\nthis is not C;\n")
    result = await submit_and_wait(
        judge, CandidateBundle.from_project(folder, load_operator(), toolchain="cpu")
    )
    assert result.status is SubmissionStatus.FINISHED
    assert [p.outcome for p in result.points] == ["compile_failed"] * 15
    assert all(p.error_bucket is None and p.time_us is None for p in result.points)
    assert any("cmg_kernel.c" in line for line in result.raw["diagnostics"])
    assert not any(str(Path.home()) in line for line in result.raw["diagnostics"])
