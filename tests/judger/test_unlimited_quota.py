"""Issue 17 point 2: a daily limit left empty is no local cap, against a real local judge.

The Judger submits past the contest's 50 a day, while every attempt is still a row, a source is
still never sent twice, the judge's 429 `rate_limited` is waited out (Retry-After) and its 429
`quota_exceeded` pauses submitting until the contest day turns. The candidates' kernels do not
compile (`#error`), so the judge's evaluation of each is one failed compile, not 15 cases.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from justkernel.app import LabRuntime
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.evaluation.protocol import CandidateBundle, JudgeQuotaError
from justkernel.judger.judger import Judger
from justkernel.judger.settings import MAX_DAILY_QUOTA, JudgerSettings, JudgerSettingsFile
from justkernel.settings.config import Settings
from justkernel.store.candidates import CandidateStore
from tests.judger.test_judger import _files
from tests.support.cli import run_cli
from tests.support.judge import Clock, judge_in_thread, judge_token, new_judge_dir
from tests.support.labs import open_folder

KERNEL = "op_kernel/cmg_kernel.c"
JUDGE_QUOTA = MAX_DAILY_QUOTA + 3  # the judge's own daily quota: past the contest's 50
PER_MINUTE = 30  # the judge's submission rate: the 31st of a minute gets 429 rate_limited
OFFERED = JUDGE_QUOTA + 2  # nominated: two more than the judge takes today


@dataclass(frozen=True)
class _Receipt:
    """What a frozen candidate keeps of a receipt (`store.candidates.FrozenReceipt`)."""

    job_key: str
    source_sha256: str
    total_est_cycles: int | None = None
    status: str = "compile_error"


async def test_an_empty_quota_submits_past_50_with_dedup_backoff_and_a_pause(
    runtime: LabRuntime,
) -> None:
    judge_dir = new_judge_dir(open_folder("jk-judger-unlimited-"))
    run = await runtime.lab.runs.create("unlimited quota")
    scheduler = runtime.scheduler(run.id)
    team = await scheduler.add_team("offline")
    store = CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs)
    # a quota day of its own: the shared lab folder counts submissions per backend and day
    clock = Clock(datetime(2031, 3, 15, 4, 0, tzinfo=UTC))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the client's backoff, really waited, recorded
        waits.append(seconds)
        await asyncio.sleep(seconds)

    cands = []
    for n in range(OFFERED):
        files = _files(None)  # marked: no other test submits these sources
        files[KERNEL] = f"#error test_unlimited_quota {run.id} {n}\n".encode()
        sha = CandidateBundle.create(runtime.operator.name, files, toolchain="cpu").source_sha256
        cand, _ = await store.freeze(run.id, team.id, files, _Receipt(f"none-{n}", sha), None)
        await store.set_status(run.id, cand.id, "nominated")
        cands.append(cand)

    with judge_in_thread(
        judge_dir, daily_quota=JUDGE_QUOTA, submissions_per_minute=PER_MINUTE
    ) as url:
        client = HttpJudgeClient(
            JudgeClientConfig(base_url=url, token=judge_token(judge_dir), backend="local"),
            sleep=sleep,
        )
        config = JudgerSettings(quota_per_day=None, poll_seconds=0.2)

        def make() -> Judger:  # a fresh Judger is a restarted lab: all it knows is in the DB
            return Judger(
                runtime.lab, run.id, runtime.operator, store, scheduler.board, client, config,
                clock=clock, toolchain="cpu",
            )  # fmt: skip

        judger = make()
        # one pass sends every nomination: past 50, past the judge's rate (waited out), up to
        # the judge's own quota, whose answer stops the pass
        with pytest.raises(JudgeQuotaError):
            await judger.step()
        subs = await judger.submissions()
        assert len(subs) == JUDGE_QUOTA > MAX_DAILY_QUOTA
        assert await judger.used_today() == JUDGE_QUOTA
        assert len({s.source_sha256 for s in subs}) == JUDGE_QUOTA
        assert all(s.status == "submitted" for s in subs)  # each answered with its judge id
        assert waits and all(0 < w <= 60 for w in waits)  # the 429's Retry-After, waited

        # paused: the next pass sends nothing (a send would meet quota_exceeded and raise)
        assert await judger.at_cap()
        await judger.step()
        assert len(await judger.submissions()) == JUDGE_QUOTA
        left = {c.id: c.status for c in await store.list(run.id)}
        assert [left[c.id] for c in cands[JUDGE_QUOTA:]] == ["reviewed", "reviewed"]

        # never the same source twice, asked again by a restarted lab (its pause forgotten)
        restarted = make()
        assert not await restarted.at_cap()
        await restarted._submit(await store.get(run.id, cands[0].id))
        assert len(await restarted.submissions()) == JUDGE_QUOTA

        # every official result comes back, each once
        for _ in range(900):
            if all(s.status != "submitted" for s in await judger.submissions()):
                break
            await judger.step()
            await asyncio.sleep(0.2)
        finals = [s.status for s in await judger.submissions()]
        assert finals == ["official_fail"] * JUDGE_QUOTA, finals
        events = [e async for e in runtime.lab.events.iter_all(run.id)]
        results = [e.payload["submission_id"] for e in events if e.kind == "official.result"]
        assert sorted(results) == sorted(s.id for s in subs)
        sent = [e for e in events if e.kind == "judger.submission"]
        assert len(sent) == JUDGE_QUOTA
        assert all(e.payload["quota_limit"] is None for e in sent)  # no local cap, recorded

    # the pause lasts until 00:00 Shanghai, not longer
    clock.now += timedelta(days=1)
    assert not await judger.at_cap()


def test_the_local_cap_still_bounds_and_empty_is_none() -> None:
    from justkernel.judger.quota import cap_reached

    assert cap_reached(50, 50) and not cap_reached(49, 50)
    assert not cap_reached(10_000, None)
    assert JudgerSettings.model_validate_json('{"quota_per_day": null}').quota_per_day is None
    with pytest.raises(ValueError):
        JudgerSettings(quota_per_day=MAX_DAILY_QUOTA + 1)


def test_the_cli_leaves_the_daily_limit_empty(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        config_dir=tmp_path / "config",
        models_local_file=tmp_path / "models.local.toml",
    )
    done = run_cli(settings, "judger", "set", "--no-quota-cap", COLUMNS="200")
    assert done.exit_code == 0, done.output
    assert "no local cap" in done.output
    assert JudgerSettingsFile(settings.data_dir).load().quota_per_day is None
    both = run_cli(settings, "judger", "set", "--no-quota-cap", "--quota", "3")
    assert both.exit_code != 0 and "contradict" in both.output
    over = run_cli(settings, "judger", "set", "--quota", "51")
    assert over.exit_code != 0 and "50" in over.output
    assert JudgerSettingsFile(settings.data_dir).load().quota_per_day is None  # unchanged
