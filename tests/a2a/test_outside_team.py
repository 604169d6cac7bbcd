"""An outside agent, built with the a2a-sdk client, joins a run as a team over real HTTP,
submits a candidate, receives official feedback and acknowledges it exactly once."""

from __future__ import annotations

import logging

import pytest
from a2a.helpers import get_data_parts, new_data_part
from a2a.types import GetExtendedAgentCardRequest, TaskState
from a2a.utils.errors import A2AError

from justkernel.app import LabRuntime
from justkernel.store.candidates import CandidateStore
from tests.a2a.conftest import (
    Served,
    fixture_files,
    new_run_with_teams,
    send,
    team_client,
)


def _artifact(task, name):  # type: ignore[no-untyped-def]
    found = [a for a in task.artifacts if a.name == name]
    assert len(found) == 1, [a.name for a in task.artifacts]
    return get_data_parts(found[0].parts)[0]


async def _events(runtime: LabRuntime, run_id: str, kind: str) -> list[dict]:
    return [e.payload async for e in runtime.lab.events.iter_all(run_id) if e.kind == kind]


@pytest.mark.slow
async def test_outside_team_submits_and_acks_feedback(
    runtime: LabRuntime, served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # the SDK logs its call context at debug level
    run_id, [joined] = await new_run_with_teams(runtime, "Outsider")
    team_id, token = joined.team.id, joined.token
    async with team_client(served.team_url(team_id), token) as client:
        extended = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        assert extended.name == joined.team.display_name and run_id in extended.description
        skills = {s.id for s in extended.skills}
        assert skills == {"submit_candidate", "ask", "inbox", "ack_feedback"}

        # a candidate: the fixture's editable files as a data part {relpath: text}
        task = await send(client, "submit_candidate", [new_data_part(fixture_files())])
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
        receipt = _artifact(task, "receipt")
        result = _artifact(task, "result")
        assert receipt["status"] == result["status"] == "measured"
        assert receipt["team"] == team_id and receipt["total_est_cycles"] > 0
        assert result["total_est_cycles"] == receipt["total_est_cycles"]
        frozen = await CandidateStore(runtime.lab.db, runtime.lab.events, runtime.lab.blobs).list(
            run_id, team_id=team_id
        )
        assert [c.id for c in frozen] == [result["candidate_id"]]  # the Judger sees it
        assert frozen[0].source_sha256 == receipt["source_sha256"]
        [evaluation] = await _events(runtime, run_id, "a2a.evaluation")
        assert evaluation["task_id"] == task.id and evaluation["status"] == "measured"

        # official feedback, posted as the Judger does (twice, with the same message id)
        board = served.endpoint.executor.board
        feedback = {"summary": "official: pass", "status": "official_pass", "prof_sum_us": 41.5}
        [(posted, new), (again, new_again)] = [
            await board.post(
                run_id,
                sender="judger",
                sender_message_id="official:sub-1",
                recipient=team_id,
                type="feedback",
                payload=feedback,
            )
            for _ in range(2)
        ]
        assert new and not new_again and again.id == posted.id

        inbox = await send(client, "inbox")
        assert inbox.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        delivered = _artifact(inbox, "feedback")
        assert delivered["message_id"] == posted.id and delivered["from"] == "judger"
        assert delivered["status"] == "official_pass"
        assert await board.delivery_states(run_id, posted.id) == {team_id: "delivered"}

        acked = await send(client, "ack_feedback", task_id=inbox.id)
        assert acked.status.state == TaskState.TASK_STATE_COMPLETED
        assert _artifact(acked, "ack") == {"acked": 1}
        assert await board.delivery_states(run_id, posted.id) == {team_id: "acked"}

        with pytest.raises(A2AError):  # a repeated ack: the task is done, nothing changes
            await send(client, "ack_feedback", task_id=inbox.id)
        empty = await send(client, "inbox")  # the duplicate post is not delivered again
        assert empty.status.state == TaskState.TASK_STATE_COMPLETED and not empty.artifacts

    acks = [e for e in await _events(runtime, run_id, "a2a.acked") if e["message_id"] == posted.id]
    assert len(acks) == 1
    assert await board.delivery_states(run_id, posted.id) == {team_id: "acked"}
    assert token not in caplog.text
