"""`app.RunSession`, the one driver of a run the CLI and the dashboard share: the runtime
opens on the server's own lab (one database engine) and leaves it open; a stopped run logs
`run.summary` only when the caller says stopping ends it; a judge that cannot be reached is
raised for the CLI and logged as `judger.unavailable` for the dashboard; the Judger's `busy`
keeps the run open, and a crashed Judger costs the run its Judger, never its summary."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from justkernel.app import LabRuntime, RunSession, TeamPlan, open_runtime
from justkernel.core.reasons import ReasonCode
from justkernel.lab import open_lab
from justkernel.settings.config import ConfigError, Settings


@pytest.fixture
async def session_runtime(settings: Settings) -> AsyncIterator[LabRuntime]:
    async with open_runtime(settings.model_copy(update={"judge": "off"}), slots=1) as opened:
        yield opened


async def _kinds(runtime: LabRuntime, run_id: str) -> list[str]:
    return [e.kind async for e in runtime.lab.events.iter_all(run_id)]


class StandInJudger:
    """The two seams `drive` uses: `run(stop)` beside the scheduler, `busy()` as its hook."""

    def __init__(self, busy_answers: int, *, crash: bool = False) -> None:
        self.busy_answers = busy_answers
        self.crash = crash
        self.asked = 0
        self.saw_stop = False

    async def busy(self) -> bool:
        self.asked += 1
        return self.asked <= self.busy_answers

    async def run(self, stop: asyncio.Event) -> None:
        if self.crash:
            raise RuntimeError("judger crashed")
        await stop.wait()
        self.saw_stop = True


async def test_the_runtime_shares_the_lab_it_is_given_and_leaves_it_open(
    settings: Settings,
) -> None:
    lab = await open_lab(settings)
    try:
        async with open_runtime(settings, slots=1, lab=lab) as runtime:
            assert runtime.lab is lab and runtime.lab.db is lab.db
            run = await runtime.lab.runs.create("in the runtime")
        later = await lab.runs.create("after the runtime closed")  # the engine is still open
        assert {r.id for r in await lab.runs.list()} >= {run.id, later.id}
    finally:
        await lab.close()


async def test_a_stopped_run_logs_its_summary_only_when_stopping_ends_it(
    session_runtime: LabRuntime,
) -> None:
    session = await RunSession.start(
        session_runtime,
        "stopped",
        meta={"teams": 2},
        config=None,
        teams=[TeamPlan("offline"), TeamPlan("offline", {"member_models": {}})],
    )
    teams = await session_runtime.lab.teams.list(session.run_id)
    assert len(teams) == 2 and session.run.meta["teams"] == 2
    assert await session.open_judger(judge_required=True) is None  # judging is off

    session.stop.set()  # a dashboard pause: not the run's end
    assert (await session.drive(None, summarise_stop=False)).code == ReasonCode.STOPPED
    assert "run.summary" not in await _kinds(session_runtime, session.run_id)

    again = await RunSession.reopen(session_runtime, session.run_id, None)
    again.stop.set()  # Ctrl-C on `justkernel run`: the run ends here
    assert (await again.begin(None, summarise_stop=True)).code == ReasonCode.STOPPED
    summaries = [
        e.payload
        async for e in session_runtime.lab.events.iter_all(session.run_id)
        if e.kind == "run.summary"
    ]
    assert len(summaries) == 1 and summaries[0]["reason"] == "stopped"
    assert summaries[0]["reason_code"] == "stopped"
    assert {t["team_id"] for t in summaries[0]["teams"]} == {t.id for t in teams}


async def test_an_unreachable_judge_fails_the_cli_and_is_logged_for_the_dashboard(
    settings: Settings,
) -> None:
    official = settings.model_copy(update={"judge": "official"})  # no judge.toml, no token
    async with open_runtime(official, slots=1) as runtime:
        session = await RunSession.start(runtime, "no judge", meta={}, config=None, teams=[])
        with pytest.raises(ConfigError):
            await session.open_judger(judge_required=True)
        assert await _kinds(runtime, session.run_id) == []
        assert await session.open_judger(judge_required=False) is None
        assert session.judger is None
        assert await _kinds(runtime, session.run_id) == ["judger.unavailable"]


async def test_the_judgers_busy_keeps_the_run_open_and_it_stops_before_the_summary(
    session_runtime: LabRuntime,
) -> None:
    session = await RunSession.start(session_runtime, "judged", meta={}, config=None, teams=[])
    judger = StandInJudger(busy_answers=2)
    session.judger = judger  # type: ignore[assignment]  # the Judger's seams, nothing else
    assert (await session.drive(None, summarise_stop=False)).code == ReasonCode.NO_WORK
    assert judger.asked == 3  # asked until it expected nothing more
    assert judger.saw_stop
    assert (await _kinds(session_runtime, session.run_id))[-1] == "run.summary"


async def test_a_crashed_judger_costs_the_run_its_judger_not_its_summary(
    session_runtime: LabRuntime,
) -> None:
    session = await RunSession.start(session_runtime, "crash", meta={}, config=None, teams=[])
    session.judger = StandInJudger(busy_answers=0, crash=True)  # type: ignore[assignment]
    assert (await session.drive(None, summarise_stop=False)).code == ReasonCode.NO_WORK
    assert (await _kinds(session_runtime, session.run_id))[-1] == "run.summary"
