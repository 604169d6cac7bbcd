"""A stopped run refuses outside posts with a clear error (issue #16, 13): before, an outside
agent could still submit candidates and post messages into a run whose dispatch had ended.
Reading its inbox still works (feedback the team is owed). Over real A2A HTTP."""

from __future__ import annotations

from a2a.helpers import get_message_text, new_data_part
from a2a.types import TaskState

from justkernel.app import LabRuntime
from justkernel.core.events.runs import DispatchStarted, DispatchStopped
from tests.a2a.conftest import Served, new_run_with_teams, send, team_client


async def test_a_stopped_run_refuses_outside_posts_and_still_shows_the_inbox(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [alpha, beta] = await new_run_with_teams(runtime, "Alpha", "Beta")
    question = new_data_part({"to": beta.team.id, "text": "still there?"})
    events = runtime.lab.events
    async with team_client(served.team_url(alpha.team.id), alpha.token) as client:
        await events.append(run_id, DispatchStarted(seconds=60))
        asked = await send(client, "ask", [question])
        assert asked.status.state == TaskState.TASK_STATE_COMPLETED  # a running run takes it

        await events.append(run_id, DispatchStopped(reason="time limit reached"))
        late = await send(client, "ask", [question])
        assert late.status.state == TaskState.TASK_STATE_FAILED
        said = get_message_text(late.status.message)
        assert f"run {run_id} has stopped (time limit reached)" in said
        assert "no ask until it is resumed" in said
        submitted = await send(client, "submit_candidate", [new_data_part({"files": {}})])
        assert submitted.status.state == TaskState.TASK_STATE_FAILED
        assert "has stopped" in get_message_text(submitted.status.message)
        inbox = await send(client, "inbox")
        assert inbox.status.state == TaskState.TASK_STATE_COMPLETED

        await events.append(run_id, DispatchStarted(seconds=None))  # resumed: it takes posts
        again = await send(client, "ask", [question])
        assert again.status.state == TaskState.TASK_STATE_COMPLETED
    messages = await served.endpoint.executor.board.messages(run_id, type="message")
    assert len(list(messages)) == 2  # the late one never reached the board
