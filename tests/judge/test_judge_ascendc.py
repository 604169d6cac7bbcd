"""The local judge grades Ascend C (issue 14, point 4) through the real `justkernel judge-server`
over HTTP with the real `ascendc-cpu` toolchain (real g++, real sandbox): the template baseline
passes all 15 hidden points, timed by the engine's per-pipe cycle model; a tiling that accepts
only the local cases' shapes passes every local case in the lab and fails every hidden point;
the ladder's narrow kernel fails every hidden point of a general layout;
the C port stays selectable on the same judge (`toolchain: cpu`, timed by callgrind), each
target with its own best times; nothing of a hidden shape or of the kernel's run reaches a
result."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from justkernel.core.receipts import Status
from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.protocol import CandidateBundle, OfficialResult, SubmissionStatus
from justkernel.evaluation.submission_files import encode_bundle
from justkernel.judge.eval import TIME_SOURCE
from justkernel.judge.hidden_cases import point_ids
from justkernel.judge.store import JudgeStore, best_times_key
from justkernel.operators import CaseSpec, load_operator
from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain
from justkernel.toolchains.registry import TOOLCHAINS
from tests.judge.test_judge_hidden import assert_no_hidden_shape, hidden_cases
from tests.support.judge import (
    RunningJudge,
    ascendc_bundle,
    bundle,
    judge_in_thread,
    judge_token,
    new_judge_dir,
    running_judge,
    seed_ascendc_artefacts,
)
from tests.toolchains.ascendc_cpu.ladder_support import (
    ladder,
    ladder_project,
    marked_site,
    misuse_project,
    toolchain,
)
from tests.toolchains.ascendc_cpu.test_project_baseline import variant
from tests.workers.test_evaluator_shared import evaluator, require_tools

pytestmark = pytest.mark.timeout(300)
PER_PIPE = "per-pipe cycle model"


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJudge]:
    require_tools(valgrind=True)
    asyncio.run(seed_ascendc_artefacts())
    with running_judge(new_judge_dir(tmp_path_factory.mktemp("ascendc"))) as running:
        yield running


async def submit_and_wait(judge: RunningJudge, candidate: CandidateBundle) -> OfficialResult:
    async with local_judge_client(judge.judge_dir) as client:
        sid = await client.submit(candidate)
        return await client.wait(sid, max_seconds=240, poll_seconds=0.3)


async def test_the_ascendc_baseline_passes_every_hidden_point_timed_by_the_pipe_model(
    judge: RunningJudge,
) -> None:
    candidate = ascendc_bundle(team="blue", candidate_id="ascendc-baseline")
    assert candidate.toolchain == "ascendc-cpu"
    result = await submit_and_wait(judge, candidate)
    assert result.status is SubmissionStatus.FINISHED, result.raw
    assert result.passed
    assert [p.id for p in result.points] == list(point_ids())
    for p in result.points:
        assert p.passed and p.outcome == "passed"
        assert p.time_us is not None and p.time_us > 0
    raw = result.raw
    assert raw["toolchain"] == raw["evaluation"]["toolchain"] == "ascendc-cpu"
    assert raw["time_source"] == TIME_SOURCE["ascendc-cpu"] and PER_PIPE in raw["time_source"]
    assert raw["source_sha256"] == candidate.source_sha256
    assert_no_hidden_shape(raw)


async def test_a_tiling_for_the_local_shapes_only_passes_locally_and_fails_every_hidden_point(
    judge: RunningJudge,
) -> None:
    folder = variant("local_shapes_only")
    ev = evaluator(slots=1, tc=toolchain())  # type: ignore[arg-type]

    async def local() -> object:
        try:
            return await ev.evaluate(
                folder, team="cheat", kind="probe", case_ids=ev.local_case_ids()
            )
        finally:
            await ev.pool.close()

    # the lab's probe of the 15 local cases and the judge's 15 hidden points, side by side
    lab, result = await asyncio.gather(local(), submit_and_wait(judge, ascendc_bundle(folder)))
    assert lab.status is Status.PROBE_PASSED, lab.detail  # type: ignore[attr-defined]
    assert len(lab.cases) == 15 and all(c.passed for c in lab.cases)  # type: ignore[attr-defined]

    assert result.status is SubmissionStatus.FINISHED, result.raw
    assert not result.passed and result.raw["verdict"] == "fail"
    assert [p.id for p in result.points] == list(point_ids())
    for p in result.points:  # no hidden point has a local shape: the tiling rejects them all
        assert not p.passed and p.outcome != "passed", p
        assert p.time_us is None  # not measured: a failing candidate is not simulated
    assert result.prof_sum_us is None
    assert result.raw["toolchain"] == "ascendc-cpu"
    text = json.dumps(result.raw)
    assert "tiling rejected" not in text and "GRAPH_FAILED" not in text  # no run text
    assert result.raw["diagnostics"] == []
    assert_no_hidden_shape(result.raw)


def ladder_accepts(case: CaseSpec) -> bool:
    """The ladder's tiling contract (tests/fixtures/ascendc/README.md): float32, input1 and
    input2 of one 2-D shape, input0 of that shape or its row broadcast, a 2-D reduction."""
    n = case.input1[-1]
    return (
        case.dtype == "float32"
        and len(case.input1) == 2
        and case.input1 == case.input2
        and case.input0 in (case.input1, (n,), (1, n))
        and all(a in (0, 1, -1, -2) for a in case.axes)
    )


async def test_the_ladders_narrow_kernel_passes_its_cases_and_fails_the_general_layouts(
    judge: RunningJudge,
) -> None:
    """The ladder's best rung, tuned on the three perf cases (plain 2-D float32), passes them in
    the lab and the hidden points of that layout, and fails every point of another layout:
    broadcast columns and scalars, lower ranks, 3-D and 4-D, middle and two-axis reductions,
    float16. 12 of the 15 hidden points are such general layouts, whatever the seed."""
    tc = toolchain()
    lab, result = await asyncio.gather(
        ladder("best"), submit_and_wait(judge, ascendc_bundle(ladder_project(tc, "best")))
    )
    receipt = lab["best"].receipt
    assert all(c.passed for c in receipt.cases) and len(receipt.cycles) == 3, receipt.detail
    assert all(c.check.passed for c in receipt.cycles)

    plain = {c.id for c in hidden_cases() if ladder_accepts(c)}
    assert plain == {"h01", "h02", "h05"}  # row, row with input0 broadcast, full: 2-D float32
    assert {p.id for p in result.points if p.passed} == plain
    assert not result.passed and result.prof_sum_us is None
    assert_no_hidden_shape(result.raw)


async def test_an_api_misuse_on_a_hidden_point_says_its_outcome_and_nothing_of_the_run(
    judge: RunningJudge,
) -> None:
    """A misuse record names the check, the site and a message that can quote extents (a
    DataCopy past a GM buffer of N elements): only the point's outcome reaches the result."""
    tc = toolchain()
    folder = misuse_project(tc, "gm_out_of_bounds")
    result = await submit_and_wait(judge, ascendc_bundle(folder))
    assert result.status is SubmissionStatus.FINISHED and not result.passed
    outcomes = {p.outcome for p in result.points}
    assert "api_misuse" in outcomes, outcomes
    text = json.dumps(result.raw)
    site, _line = marked_site(folder)  # the file the misuse record names
    assert site not in text and "gm_out_of_bounds" not in text  # neither site nor check
    assert result.raw["diagnostics"] == []
    assert_no_hidden_shape(result.raw)


async def test_the_c_port_stays_selectable_on_the_same_judge(judge: RunningJudge) -> None:
    candidate = bundle(team="red", candidate_id="c-port")
    assert candidate.toolchain == "cpu"
    result = await submit_and_wait(judge, candidate)
    assert result.passed, result.raw
    assert result.raw["toolchain"] == result.raw["evaluation"]["toolchain"] == "cpu"
    assert result.raw["time_source"] == TIME_SOURCE["cpu"]
    assert "callgrind" in result.raw["time_source"] and PER_PIPE not in result.raw["time_source"]
    async with local_judge_client(judge.judge_dir) as client:
        listed = await client._send("GET", "/api/submissions")
    targets = {s["submission_id"]: s["toolchain"] for s in listed.json()["submissions"]}
    assert targets[result.submission_id] == "cpu"
    assert set(targets.values()) <= {"cpu", "ascendc-cpu"}


class HostWithoutGpp(AscendcCpuToolchain):
    """The real toolchain on a host that lacks g++ (what `missing()` reports there)."""

    def missing(self) -> tuple[str, ...]:
        return ("g++ (the C++ compiler)", "the Ascend C library headers (/opt/secret/include)")


def test_a_target_the_host_cannot_run_is_refused_before_it_is_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TOOLCHAINS, "ascendc-cpu", lambda d, cache: HostWithoutGpp(d))
    judge_dir = new_judge_dir(tmp_path)
    token = judge_token(judge_dir)
    with judge_in_thread(judge_dir) as url:
        body = encode_bundle(ascendc_bundle())
        r = httpx.post(
            f"{url}/api/submissions",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert r.status_code == 400 and r.json()["error"] == "bad_bundle", r.text
        detail = r.json()["detail"]
        assert "'ascendc-cpu': this judge's host cannot run it" in detail
        assert "g++" in detail and "/opt/secret" not in detail  # what, never where
        quota = httpx.get(f"{url}/api/quota", headers={"Authorization": f"Bearer {token}"})
        assert quota.json()["used"] == 0  # nothing was queued or counted


def test_best_times_are_kept_per_target_and_old_rows_read_as_the_c_port(tmp_path: Path) -> None:
    db = tmp_path / "judge.db"
    old = sqlite3.connect(db)  # a judge database from before targets: no toolchain column
    old.execute(
        "CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL "
        "UNIQUE, account TEXT NOT NULL, operator TEXT NOT NULL, idempotency_key TEXT, status "
        "TEXT NOT NULL, quota_day TEXT NOT NULL, submitted_at TEXT NOT NULL, started_at TEXT, "
        "finished_at TEXT, source_sha256 TEXT NOT NULL, files TEXT, client TEXT NOT NULL, "
        "result TEXT, error TEXT, UNIQUE (account, idempotency_key))"
    )
    old.execute(
        "INSERT INTO submissions (id, account, operator, status, quota_day, submitted_at, "
        "source_sha256, files, client) VALUES ('sub-old', 'default', 'confusion_mul_grad', "
        "'queued', '2026-01-01', 't', 'abc', '{}', '{}')"
    )
    old.commit()
    old.close()
    store = JudgeStore(db)
    try:
        old_row = store.get("sub-old")
        assert old_row is not None and old_row.toolchain == "cpu"
        op = load_operator().name
        for toolchain_id, t in (("cpu", 50.0), ("ascendc-cpu", 7.0)):
            sub, created = store.add(
                account="default",
                operator=op,
                quota_day="2026-01-01",
                submitted_at="t",
                source_sha256=toolchain_id,
                files={"f": b"x"},
                client={},
                idempotency_key=None,
                daily_limit=10,
                toolchain=toolchain_id,
            )
            assert created and sub is not None and sub.toolchain == toolchain_id
            points = [{"id": "h01", "passed": True, "time_us": t}]
            store.finish(sub.id, best_times_key(op, toolchain_id), {"points": points}, "t")
        assert store.best_times(op) == {"h01": 50.0}  # the C port's key, as before targets
        assert store.best_times(f"{op}@ascendc-cpu") == {"h01": 7.0}
    finally:
        store.close()
