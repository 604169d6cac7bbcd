"""The Judger against a real local judge over HTTP: review, nomination, submission under the
daily quota (kept across a restart, reset at Shanghai midnight), never the same source twice,
official results back to every team, and the verified state of the art."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from justkernel.a2a.board import LabBoard
from justkernel.app import LabRuntime
from justkernel.core.receipts import Receipt
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.judger.judger import Judger
from justkernel.judger.review import review_candidate
from justkernel.judger.settings import JudgerSettings
from justkernel.paths import resources_dir
from justkernel.scheduler.wake import wake_prompt
from justkernel.store.candidates import CandidateStore
from tests.support.judge import Clock

PLAYBOOK = resources_dir() / "playbook" / "confusion_mul_grad" / "steps"


def _files(step: str | None) -> dict[str, bytes]:
    from justkernel.operators import load_operator

    project = load_operator().project_dir
    files = {
        rel: (project / rel).read_bytes()
        for rel in ("op_host/cmg_tiling.c", "op_kernel/cmg_kernel.c")
    }
    if step is not None:
        for path in (PLAYBOOK / step).rglob("*"):
            if path.is_file():
                files[path.relative_to(PLAYBOOK / step).as_posix()] = path.read_bytes()
    return files


async def _measured(runtime: LabRuntime, files: dict[str, bytes], where: Path) -> Receipt:
    folder = where / "project"
    shutil.copytree(runtime.operator.project_dir, folder)
    for rel, data in files.items():
        (folder / rel).write_bytes(data)
    receipt = await runtime.evaluator.evaluate(folder, team="team-001", kind="full")
    shutil.rmtree(folder)
    assert receipt.status == "measured", receipt.detail
    return receipt


def _client(url: str, token: str) -> HttpJudgeClient:
    return HttpJudgeClient(JudgeClientConfig(base_url=url, token=token, backend="local"))


def _judger(
    runtime: LabRuntime,
    run_id: str,
    store: CandidateStore,
    board: LabBoard,
    judge_url: tuple[str, str],
    config: JudgerSettings,
    clock: Clock,
) -> Judger:
    """A Judger of the run on the local judge at `judge_url` (a fresh one is a restarted lab:
    all it knows is in the store)."""
    return Judger(
        runtime.lab,
        run_id,
        runtime.operator,
        store,
        board,
        _client(*judge_url),
        config,
        clock=clock,
    )


async def test_judger_submits_within_quota_and_results_reach_every_team(
    runtime: LabRuntime, judge_url: tuple[str, str], tmp_path: Path
) -> None:
    run = await runtime.lab.runs.create("judger")
    scheduler = runtime.scheduler(run.id)
    teams = [await scheduler.add_team("offline") for _ in range(3)]
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    # 23:30 in Shanghai: the quota day turns in half an hour
    clock = Clock(datetime(2026, 11, 29, 15, 30, tzinfo=UTC))
    config = JudgerSettings(quota_per_day=2, poll_seconds=0.2)

    def judger() -> Judger:  # a fresh Judger is a restarted lab: all it knows is in the DB
        return _judger(runtime, run.id, store, scheduler.board, judge_url, config, clock)

    async def settle(j: Judger) -> None:
        for _ in range(600):
            await j.step()
            if all(s.status != "submitted" for s in await j.submissions()):
                return
            await _sleep(0.2)
        raise AssertionError("the judge never answered")

    for step in (None, "s1_fused_pass", "s2_contiguous_inner_loops"):
        files = _files(step)  # marked: the teams of other tests must still submit the plain steps
        kernel = "op_kernel/cmg_kernel.c"
        files[kernel] += f"\n/* test_judger: {run.id} */\n".encode()
        receipt = await _measured(runtime, files, tmp_path)
        await store.freeze(run.id, teams[0].id, files, receipt, commit=None)
        j = judger()
        await settle(j)

    subs = await judger().submissions()
    # baseline and s1 fill today's quota; s2 waits for the new day although it is better
    assert [s.status for s in subs] == ["official_pass", "official_pass"]
    assert await judger().used_today() == 2
    s2 = next(c for c in await store.list(run.id) if c.status == "reviewed")
    clock.now += timedelta(minutes=31)  # 00:01 in Shanghai
    j = judger()
    assert await j.used_today() == 0
    await settle(j)
    subs = await j.submissions()
    assert len(subs) == 3 and subs[-1].candidate_id == s2.id
    assert subs[-1].day != subs[0].day

    # never the same source twice, even if asked again
    await j._submit(await store.get(run.id, s2.id))
    assert len(await j.submissions()) == 3

    events = [e async for e in runtime.lab.events.iter_all(run.id)]
    results = [e.payload for e in events if e.kind == "official.result"]
    assert len(results) == 3
    assert all(len(r["points"]) == 15 and r["prof_sum_us"] for r in results)
    assert [r["sota_changed"] for r in results] == [True, True, True]  # each beat the last
    champion = await j.champion()
    assert champion is not None and champion[1].id == s2.id
    # every result reached each of the three teams once: the submitter by its correction task
    # (the public copy skips it), the others by the public copy; the woken turn's prompt
    # (built from the same pending news) names each result once
    wanted = sorted(r["submission_id"] for r in results)
    news = await scheduler.board.news(run.id, teams[0].id)
    prompt = wake_prompt(news).splitlines()
    named = [line for line in prompt if line.startswith("- official feedback")]
    assert len(named) == len(results), prompt
    for sub in subs:
        assert len([line for line in named if sub.candidate_id in line]) == 1, prompt
    own = await scheduler.board.deliver(run.id, teams[0].id, "check")
    assert [m.id for m in own] == [m.id for m in news]
    assert sorted(m.payload["submission_id"] for m in own) == wanted  # one message each
    assert all(m.recipient == teams[0].id for m in own)  # its own, not the public copy
    assert all(len(m.payload["points"]) == 15 for m in own)  # the full per-point data
    for team in teams[1:]:
        inbox = await scheduler.board.deliver(run.id, team.id, "check")
        assert sorted(m.payload["submission_id"] for m in inbox) == wanted
        assert all(m.recipient == "all" and "points" not in m.payload for m in inbox)


async def test_review_rejects_tampered_or_forbidden_sources(
    runtime: LabRuntime, tmp_path: Path
) -> None:
    files = _files("s1_fused_pass")
    receipt = await _measured(runtime, files, tmp_path)
    ok = review_candidate(files, receipt.source_sha256, receipt, runtime.operator)
    assert ok.verdict == "accepted", ok.reasons
    tampered = {**files, "op_kernel/cmg_kernel.c": files["op_kernel/cmg_kernel.c"] + b"\n"}
    bad = review_candidate(tampered, receipt.source_sha256, receipt, runtime.operator)
    assert bad.verdict == "rejected"
    assert any("do not hash" in r for r in bad.reasons)
    sneaky = {
        **files,
        "op_kernel/cmg_kernel.c": b"__attribute__((constructor)) static void f(void){}\n",
    }
    worse = review_candidate(sneaky, receipt.source_sha256, receipt, runtime.operator)
    assert any("constructor" in r for r in worse.reasons)
    assert (
        review_candidate(files, receipt.source_sha256, None, runtime.operator).verdict == "rejected"
    )


async def test_every_playbook_step_passes_the_rule_review(runtime: LabRuntime) -> None:
    """The review must not reject honest optimizations (vector types, unrolling, tiling)."""
    import re

    from justkernel.judger.review import FORBIDDEN_PATTERNS

    for step in sorted(p.name for p in PLAYBOOK.iterdir()):
        for rel, data in _files(step).items():
            text = data.decode()
            code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
            hits = [
                what for pattern, what in FORBIDDEN_PATTERNS.items() if re.search(pattern, code)
            ]
            assert not hits, (step, rel, hits)


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def test_a_reviewed_challenger_keeps_the_run_open_until_it_is_submitted(
    runtime: LabRuntime, judge_url: tuple[str, str], tmp_path: Path
) -> None:
    """Between its review and its nomination a candidate is `reviewed`: a run whose teams were
    done ended right there (`busy` said no), and the submission the pass then sent never had
    its result collected (seen under load in the competent-model walk)."""
    run = await runtime.lab.runs.create("reviewed, not yet nominated")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    files = _files("s1_fused_pass")
    files["op_kernel/cmg_kernel.c"] += f"\n/* reviewed challenger: {run.id} */\n".encode()
    receipt = await _measured(runtime, files, tmp_path)
    candidate, _new = await store.freeze(run.id, team.id, files, receipt, commit=None)
    await store.set_status(run.id, candidate.id, "reviewed")  # the moment before nomination

    clock = Clock(datetime(2032, 2, 3, 4, 0, tzinfo=UTC))  # a day nobody submits on

    def judger(quota: int) -> Judger:
        config = JudgerSettings(quota_per_day=quota)
        return _judger(runtime, run.id, store, scheduler.board, judge_url, config, clock)

    assert await judger(quota=5).busy()
    assert not await judger(quota=0).busy()  # no submission today: it waits for tomorrow


async def test_busy_never_says_no_while_a_pass_moves_a_candidate_on(
    runtime: LabRuntime, judge_url: tuple[str, str], tmp_path: Path
) -> None:
    """One pass takes a frozen candidate to review, then to nomination. `busy` used to ask for
    each status in turn, so asked while the pass ran it could miss the candidate at every
    step (reviewed when it looked for frozen, awaiting a human when it looked for reviewed)
    and the run ended before the nomination (the flaky judger-to-the-end tests in CI)."""
    import asyncio

    run = await runtime.lab.runs.create("busy mid-pass")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    files = _files("s1_fused_pass")
    files["op_kernel/cmg_kernel.c"] += f"\n/* busy mid-pass: {run.id} */\n".encode()
    receipt = await _measured(runtime, files, tmp_path)
    candidate, _new = await store.freeze(run.id, team.id, files, receipt, commit=None)

    clock = Clock(datetime(2032, 6, 7, 4, 0, tzinfo=UTC))  # a day nobody submits on
    config = JudgerSettings(human_approval=True)
    judger = _judger(runtime, run.id, store, scheduler.board, judge_url, config, clock)
    passing = asyncio.create_task(judger.step())
    answers: list[bool] = []

    async def ask() -> None:  # several askers, so some ask between any two of the pass's reads
        while not passing.done():
            answers.append(await judger.busy())
            await asyncio.sleep(0)

    await asyncio.gather(passing, *(ask() for _ in range(4)))
    assert (await store.get(run.id, candidate.id)).status == "awaiting_approval"
    assert answers and all(answers), f"busy said no {answers.count(False)} of {len(answers)} times"
    assert await judger.busy()  # the nomination waits for a human
