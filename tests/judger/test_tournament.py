"""An offline tournament of three teams on the embedded defaults with the Judger and a real
local judge: improvements are frozen, judged, submitted, and every official result reaches each
of the three teams once (the submitter by its own message, the others by the public copy) and
is acknowledged exactly once — with a duplicated send, and with the lab restarted between
delivery and acknowledgement."""

from __future__ import annotations

import asyncio
import contextlib

from justkernel.app import LabRuntime, open_runtime
from justkernel.core.reasons import ReasonCode
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.judger.judger import Judger
from justkernel.judger.settings import JudgerSettings
from justkernel.settings.config import Settings

TIMEOUT = 900


def _judger(runtime: LabRuntime, run_id: str, scheduler, url: str, token: str) -> Judger:  # type: ignore[no-untyped-def]
    client = HttpJudgeClient(JudgeClientConfig(base_url=url, token=token, backend="local"))
    return Judger(
        runtime.lab,
        run_id,
        runtime.operator,
        scheduler.candidates,
        scheduler.board,
        client,
        JudgerSettings(poll_seconds=0.5),
    )


async def _feedback_delivered(runtime: LabRuntime, run_id: str) -> bool:
    feedback = {m.id for m in await runtime_board(runtime, run_id).messages(run_id, "feedback")}
    async for event in runtime.lab.events.iter_all(run_id):
        if event.kind == "a2a.delivered" and event.payload["message_id"] in feedback:
            return True
    return False


def runtime_board(runtime: LabRuntime, run_id: str):  # type: ignore[no-untyped-def]
    return runtime.scheduler(run_id).board


async def test_results_reach_every_team_once_across_a_restart(
    judge_url: tuple[str, str], lab_settings: Settings
) -> None:
    url, token = judge_url
    async with open_runtime(lab_settings, slots=2) as runtime:
        run = await runtime.lab.runs.create("tournament")
        scheduler = runtime.scheduler(run.id)
        teams = [await scheduler.add_team("offline") for _ in range(3)]
        judger = _judger(runtime, run.id, scheduler, url, token)
        stop = asyncio.Event()
        judging = asyncio.create_task(judger.run(stop))
        dispatch = asyncio.create_task(scheduler.run(seconds=TIMEOUT, busy=judger.busy))
        async with asyncio.timeout(TIMEOUT):
            while not await _feedback_delivered(runtime, run.id):
                assert not dispatch.done(), "the run ended before any feedback was delivered"
                await asyncio.sleep(0.2)
        # the lab dies right after a delivery, before the agent's next step could acknowledge
        # it; its connections close as a dead process's do (a write cut off by the cancel is
        # rolled back instead of holding the databases' write lock against the restarted lab)
        for task in (dispatch, judging):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async with open_runtime(lab_settings, slots=2) as restarted:
        scheduler = restarted.scheduler(run.id)
        judger = _judger(restarted, run.id, scheduler, url, token)
        stop = asyncio.Event()
        judging = asyncio.create_task(judger.run(stop))
        reason = await scheduler.run(seconds=TIMEOUT, busy=judger.busy)
        stop.set()
        await judging
        assert reason.code == ReasonCode.NO_WORK

        board = scheduler.board
        results = [
            e.payload
            async for e in restarted.lab.events.iter_all(run.id)
            if e.kind == "official.result"
        ]
        assert results, "nothing was submitted"
        # the Judger's feedback reaches the page as a code and values it translates (issue #16)
        coded = [
            e.payload
            async for e in restarted.lab.events.iter_all(run.id)
            if e.kind == "a2a.message" and e.payload.get("type") == "feedback"
        ]
        assert coded and all(
            m["summary_code"] in ("feedback_own", "feedback_public")
            and m["summary_params"]["status"] in ("official_pass", "official_fail")
            and m["summary_params"]["candidate"] in m["summary"]
            for m in coded
        ), coded
        news = [m for m in await board.messages(run.id, "feedback") if m.recipient == "all"]
        assert len(news) == len(results)
        # a duplicated send of the same result is the same message
        again, created = await board.post(
            run.id,
            sender="judger",
            sender_message_id=news[0].sender_message_id,
            recipient="all",
            type="feedback",
            payload=news[0].payload,
        )
        assert not created and again.id == news[0].id
        acks = [
            (e.team, e.payload["message_id"])
            async for e in restarted.lab.events.iter_all(run.id)
            if e.kind == "a2a.acked"
        ]
        # each team received each result once, acked once: the submitter by its own message
        # (the full per-point data), every other team by the public copy; nothing pending
        feedback = await board.messages(run.id, "feedback")
        for result in results:
            about = [m for m in feedback if m.payload["submission_id"] == result["submission_id"]]
            submitter = next(m.recipient for m in about if m.recipient != "all")
            got: dict[str, list[str]] = {t.id: [] for t in teams}
            for message in about:
                states = await board.delivery_states(run.id, message.id)
                assert set(states.values()) == {"acked"}, states
                for team_id in states:
                    got[team_id].append(message.id)
                    assert acks.count((team_id, message.id)) == 1
            assert all(len(ids) == 1 for ids in got.values()), got
            [own] = got[submitter]
            assert "points" in next(m for m in about if m.id == own).payload
        for team in teams:
            assert await board.pending(run.id, team.id) == 0
        frozen = await scheduler.candidates.list(run.id)
        assert any(c.status in ("official_pass", "official_fail") for c in frozen)
