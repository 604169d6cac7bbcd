"""The Judger's strategies and settings against a real local judge over HTTP, on sources the
real evaluator measured: the official-driven strategy freezes sources that failed local
precision through the scheduler's own receipt path and spends a daily allowance of official
submissions on them as a diagnosis; settings changed in the shared file apply on the next pass;
the model named in the settings reviews inside the Judger and never crashes it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from justkernel.app import LabRuntime
from justkernel.core.receipts import Receipt
from justkernel.evaluation.official_client import HttpJudgeClient
from justkernel.judge.public import ERROR_BUCKETS
from justkernel.judger.approvals import DecisionRefused, decide
from justkernel.judger.judger import Judger
from justkernel.judger.session import PresetReviews
from justkernel.judger.settings import JudgerSettings, JudgerSettingsFile
from tests.judger.test_judger import _client, _files, _measured
from tests.judger.test_model_review import KEY, REJECT
from tests.support.judge import KERNELS, Clock
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer, Reply

KERNEL = "op_kernel/cmg_kernel.c"
UNVERIFIED_NOTE = "local precision not fully verified"


def _variant(name: str, label: str) -> dict[str, bytes]:
    """A fixture kernel over the template, made unique to this file and `label`: the lab's
    submissions table takes a source only once per backend, across runs and tests."""
    files = _files(None)
    for path in (KERNELS / name).rglob("*"):
        if path.is_file():
            files[path.relative_to(KERNELS / name).as_posix()] = path.read_bytes()
    files[KERNEL] += f"\n/* test_judger_strategies: {label} */\n".encode()
    return files


@pytest.fixture
def settings_file(runtime: LabRuntime) -> Iterator[JudgerSettingsFile]:
    """The lab's shared `judger.json`, put back as it was afterwards (the lab data folder,
    and so the file, is shared by every test of the session)."""
    shared = JudgerSettingsFile(runtime.lab.settings.resolved_data_dir)
    before = shared.path.read_bytes() if shared.path.exists() else None
    try:
        yield shared
    finally:
        if before is None:
            shared.path.unlink(missing_ok=True)
        else:
            shared.path.write_bytes(before)


@pytest.fixture
async def judge(judge_url: tuple[str, str]) -> AsyncIterator[HttpJudgeClient]:
    """A client of the real local judge over HTTP (closed afterwards)."""
    async with _client(*judge_url) as client:
        yield client


async def _events(runtime: LabRuntime, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e.payload async for e in runtime.lab.events.iter_all(run_id) if e.kind == kind]


async def _settle(judger: Judger) -> None:
    """Passes until no submission waits for its official result."""
    for _ in range(900):
        await judger.step()
        if all(s.status != "submitted" for s in await judger.submissions()):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the judge never answered")


async def test_official_driven_diagnoses_unverified_sources_within_the_allowance(
    runtime: LabRuntime,
    judge: HttpJudgeClient,
    settings_file: JudgerSettingsFile,
) -> None:
    run = await runtime.lab.runs.create("official-driven")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    ctx = (await scheduler._runtime(team)).ctx

    async def simulate(files: dict[str, bytes], what: str) -> tuple[Receipt, dict[str, bytes], str]:
        """What simulate_kernel does with the team's workspace: commit, full evaluation."""
        for rel, data in files.items():
            (ctx.workspace.root / rel).write_bytes(data)
        commit = ctx.workspace.commit(what).commit
        receipt, frozen = await ctx.evaluate(kind="full", case_ids=None)
        return receipt, frozen, commit

    wrong = await simulate(_variant("wrong_output", "diagnosis-a"), "wrong column sums")
    receipt = wrong[0]
    assert receipt.status == "incorrect", receipt.detail
    assert receipt.compile is not None and receipt.compile.ok

    # the verified strategy keeps sources that failed precision away from the Judger
    settings_file.save(JudgerSettings(strategy="verified"))
    assert await ctx.on_full_receipt(*wrong) is None
    assert await scheduler.candidates.list(run.id) == []
    # so does official-driven without a diagnosis allowance
    settings_file.save(JudgerSettings(strategy="official-driven", diagnosis_per_day=0))
    assert await ctx.on_full_receipt(*wrong) is None
    assert await scheduler.candidates.list(run.id) == []

    settings_file.save(
        JudgerSettings(strategy="official-driven", diagnosis_per_day=1, poll_seconds=0.2)
    )
    first_id = await ctx.on_full_receipt(*wrong)
    assert first_id is not None
    first = await scheduler.candidates.get(run.id, first_id)
    assert (first.local_passed, first.status) == (False, "frozen")
    assert first.source_sha256 == receipt.source_sha256 and first.commit == wrong[2]
    assert await scheduler.board.messages(run.id, "candidate") == []  # never shared

    clock = Clock(datetime(2031, 5, 6, 4, 0, tzinfo=UTC))  # a day no other test submits on
    judger = Judger(
        runtime.lab,
        run.id,
        runtime.operator,
        scheduler.candidates,
        scheduler.board,
        judge,
        clock=clock,
        settings_file=settings_file,
    )
    await judger.step()
    assert judger.config.strategy == "official-driven"  # read from the file
    (review,) = await _events(runtime, run.id, "judger.review")
    assert review["candidate_id"] == first_id and review["verdict"] == "accepted"
    assert review["reasons"] == []
    assert [n for n in review["notes"] if n.startswith(UNVERIFIED_NOTE)] == [
        f"{UNVERIFIED_NOTE} (incorrect)"
    ]
    (nomination,) = await _events(runtime, run.id, "judger.nomination")
    assert nomination["candidate_id"] == first_id and nomination["local_passed"] is False
    (submission,) = await _events(runtime, run.id, "judger.submission")
    assert submission["candidate_id"] == first_id
    assert submission["note"] == UNVERIFIED_NOTE
    assert submission["source_sha256"] == receipt.source_sha256
    assert await judger.diagnosis_used_today() == 1

    # while the judge works: a second unverified source, and a verified challenger
    second = await simulate(_variant("sequential_f32_sum", "diagnosis-b"), "f32 accumulator")
    assert second[0].status == "incorrect", second[0].detail
    # a hand edit that breaks the file never breaks the team's tool: the last good settings hold
    settings_file.path.write_text('{"strategy": "verified", "diagnosis_per_day": -1}\n')
    second_id = await ctx.on_full_receipt(*second)
    settings_file.save(judger.config)
    fast = await simulate(_variant("fast_fused_blocked", "challenger"), "fused and blocked")
    assert fast[0].status == "measured", fast[0].detail
    fast_id = await ctx.on_full_receipt(*fast)
    assert second_id is not None and fast_id is not None
    shared = await scheduler.board.messages(run.id, "candidate")
    assert [m.payload["candidate_id"] for m in shared] == [fast_id]  # only the verified one

    await _settle(judger)
    for _ in range(3):  # more passes change nothing today: the allowance is spent
        await judger.step()
    subs = await judger.submissions()
    assert [(s.candidate_id, s.status) for s in subs] == [
        (first_id, "official_fail"),
        (fast_id, "official_pass"),
    ]
    assert (await scheduler.candidates.get(run.id, second_id)).status == "reviewed"
    assert await judger.diagnosis_used_today() == 1 and await judger.used_today() == 2
    sent = await _events(runtime, run.id, "judger.submission")
    assert {s["candidate_id"]: s["note"] for s in sent} == {first_id: UNVERIFIED_NOTE, fast_id: ""}
    # the note travelled with the bundle: the judge's own record of the submission has it
    for sub in subs:
        stored = (await judge.result(sub.id)).raw["client"]
        assert stored["candidate_id"] == sub.candidate_id
        assert stored["note"] == (UNVERIFIED_NOTE if sub.candidate_id == first_id else "")

    results = {r["candidate_id"]: r for r in await _events(runtime, run.id, "official.result")}
    diagnosis = results[first_id]
    assert diagnosis["status"] == "official_fail"
    points = diagnosis["points"]
    assert len(points) == 15
    assert {"id", "passed", "error_bucket", "time_us", "outcome"} <= set(points[0])
    failed = [p for p in points if not p["passed"]]
    assert failed and all(p["outcome"] == "incorrect" for p in failed)
    # how much is wrong, per point, in coarse buckets: enough to find the bug, never a count
    assert all(p["error_bucket"] in ERROR_BUCKETS for p in failed)
    assert all(p["error_ratio"] is None for p in points)
    assert all(p["time_us"] is None for p in failed)
    assert any(p["passed"] for p in points)  # the row reductions are right: a diagnosis
    assert diagnosis["sota_changed"] is False
    assert results[fast_id]["sota_changed"] is True
    # the failing team gets the per-point data back as its correction task
    inbox = await scheduler.board.deliver(run.id, team.id, "check")
    feedback = [m.payload for m in inbox if m.recipient == team.id]
    assert [f["points"] for f in feedback if f["candidate_id"] == first_id] == [points]

    # the next quota day brings a new allowance, and the second source is next in line
    clock.now += timedelta(days=1)
    assert await judger.diagnosis_used_today() == 0
    challenger = await judger._challenger()
    assert challenger is not None and challenger.id == second_id


async def test_settings_changed_in_the_file_apply_on_the_next_pass(
    runtime: LabRuntime,
    judge: HttpJudgeClient,
    settings_file: JudgerSettingsFile,
    tmp_path: Path,
) -> None:
    run = await runtime.lab.runs.create("settings")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    store = scheduler.candidates
    settings_file.save(JudgerSettings(poll_seconds=0.2))
    judger = Judger(
        runtime.lab,
        run.id,
        runtime.operator,
        store,
        scheduler.board,
        judge,
        JudgerSettings(human_approval=False),
        clock=Clock(datetime(2031, 5, 9, 4, 0, tzinfo=UTC)),
        settings_file=settings_file,
    )
    await judger.step()  # nothing to judge yet; the settings are read
    assert judger.config.human_approval is False and judger.config.poll_seconds == 0.2

    # a human turns approval on (from the dashboard or the CLI) while the Judger runs
    settings_file.save(JudgerSettings(human_approval=True, poll_seconds=0.2))
    files = _variant("fast_fused_blocked", "approval")
    receipt = await _measured(runtime, files, tmp_path)
    cand, _new = await store.freeze(run.id, team.id, files, receipt, commit=None)
    for _ in range(2):
        await judger.step()
    assert (await store.get(run.id, cand.id)).status == "awaiting_approval"
    (nomination,) = await _events(runtime, run.id, "judger.nomination")
    assert nomination["candidate_id"] == cand.id and nomination["awaiting_approval"] is True
    assert await judger.submissions() == []
    assert await _events(runtime, run.id, "judger.submission") == []

    # the decision comes from another process: only the database and the log carry it
    with pytest.raises(DecisionRefused):
        await decide(runtime.lab, store, run.id, cand.id, "maybe", "tester")
    with pytest.raises(DecisionRefused):
        await decide(runtime.lab, store, run.id, "cand-nosuchthing", "approved", "tester")
    approval = await decide(runtime.lab, store, run.id, cand.id, "approved", "tester")
    assert approval["kind"] == "judger.approval"
    assert approval["payload"] == {"candidate_id": cand.id, "decision": "approved", "by": "tester"}
    assert (await store.get(run.id, cand.id)).status == "approved_pending"
    with pytest.raises(DecisionRefused, match="not awaiting approval"):
        await decide(runtime.lab, store, run.id, cand.id, "rejected", "someone else")
    assert len(await _events(runtime, run.id, "judger.approval")) == 1

    await judger.step()
    (submission,) = await _events(runtime, run.id, "judger.submission")
    assert submission["candidate_id"] == cand.id and submission["note"] == ""
    assert (await store.get(run.id, cand.id)).status == "submitted"
    with pytest.raises(DecisionRefused):  # a decision after the fact changes nothing
        await decide(runtime.lab, store, run.id, cand.id, "rejected", "late")

    # a broken file is never replaced by defaults: the last good settings stay
    settings_file.path.write_text('{"quota_per_day": 999, "human_approval": false}\n')
    await _settle(judger)
    assert judger.config.human_approval is True and judger.config.quota_per_day == 50
    (sub,) = await judger.submissions()
    assert sub.candidate_id == cand.id and sub.status == "official_pass"


async def test_the_model_named_in_the_settings_reviews_inside_the_judger(
    runtime: LabRuntime,
    judge: HttpJudgeClient,
    settings_file: JudgerSettingsFile,
    tmp_path: Path,
) -> None:
    runtime.lab.secrets.set("scripted_key", KEY)
    files = _variant("fast_fused_blocked", "model-review")
    receipt = await _measured(runtime, files, tmp_path)
    # the quota is 0: these candidates are reviewed, never submitted
    settings_file.save(JudgerSettings(model="scripted", quota_per_day=0, poll_seconds=0.2))
    run_ids: list[str] = []

    async def review_in_a_new_run(base_url: str, name: str) -> tuple[str, dict[str, Any]]:
        run = await runtime.lab.runs.create(name)
        scheduler = runtime.scheduler(run.id)
        team = await scheduler.add_team("offline")
        cand, _new = await scheduler.candidates.freeze(run.id, team.id, files, receipt, None)
        presets = {"scripted": scripted_preset(base_url)}
        judger = Judger(
            runtime.lab,
            run.id,
            runtime.operator,
            scheduler.candidates,
            scheduler.board,
            judge,
            clock=Clock(datetime(2031, 5, 12, 4, 0, tzinfo=UTC)),
            settings_file=settings_file,
            model_review=PresetReviews(runtime.lab, run.id, runtime.operator, presets),
        )
        await judger.step()
        run_ids.append(run.id)
        (review,) = await _events(runtime, run.id, "judger.review")
        assert review["candidate_id"] == cand.id
        assert await judger.submissions() == []
        status = (await scheduler.candidates.get(run.id, cand.id)).status
        assert status == ("rejected" if review["verdict"] == "rejected" else "reviewed")
        return run.id, review

    # the model rejects: the Judger rejects, and what the model said is logged
    async with OpenAIServer([Reply(text=REJECT)], api_key=KEY) as server:
        run_id, review = await review_in_a_new_run(server.base_url, "model-rejects")
    assert review["verdict"] == "rejected"
    assert review["reasons"] == ["model: branches on the local case shape [1024,1023]"]
    assert review["reviewer"] == "rules+model:scripted"
    (said,) = await _events(runtime, run_id, "judger.model_review")
    assert said["verdict"] == "reject" and said["reviewer"] == "scripted"
    assert said["usage"] is not None and said["usage"]["input_tokens"] > 0
    (body,) = server.chat_bodies
    assert "+/* test_judger_strategies: model-review */" in body["messages"][1]["content"]
    assert await _events(runtime, run_id, "judger.nomination") == []

    # the model's server is down: the rules' acceptance stands, with a note saying why
    async with OpenAIServer() as gone:
        dead_url = gone.base_url
    run_id, review = await review_in_a_new_run(dead_url, "model-down")
    assert review["verdict"] == "accepted" and review["reasons"] == []
    assert review["reviewer"] == "rules"
    (note,) = review["notes"]
    assert note.startswith("model review unavailable: scripted: ")
    (said,) = await _events(runtime, run_id, "judger.model_review")
    assert said["verdict"] == "unavailable" and said["error"] is not None

    # a preset the lab does not know: the same note, no crash, no model event
    settings_file.save(JudgerSettings(model="no-such-preset", quota_per_day=0))
    run_id, review = await review_in_a_new_run(dead_url, "model-unknown")
    assert review["verdict"] == "accepted" and review["reviewer"] == "rules"
    (note,) = review["notes"]
    assert note.startswith("model review unavailable (no-such-preset): ")
    assert "unknown model preset 'no-such-preset'" in note
    assert await _events(runtime, run_id, "judger.model_review") == []
    for run_id in run_ids:  # the key reached the model's server, and nothing else
        assert KEY not in str([e.payload async for e in runtime.lab.events.iter_all(run_id)])
