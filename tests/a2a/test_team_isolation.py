"""Tokens guard every team: 401 without a valid token, 403 on another team's path, and a team
never reads or acts on another team's tasks. Board skills: ask and a feedback-free inbox."""

from __future__ import annotations

import uuid

import httpx
import pytest
from a2a.client import A2AClientError
from a2a.helpers import get_data_parts, get_message_text, new_data_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from justkernel.a2a.endpoint import MAX_BODY_BYTES
from justkernel.a2a.external import issue_token
from justkernel.app import LabRuntime
from tests.a2a.conftest import Served, new_run_with_teams, send, team_client

RPC_BODY = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
A2A_HEADERS = {"A2A-Version": "1.0"}
CARD = ".well-known/agent-card.json"


def bearer_headers(token: str | None) -> dict[str, str]:
    return {**A2A_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}


async def test_cards_are_public_and_calls_need_the_teams_token(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [alpha, beta] = await new_run_with_teams(runtime, "Alpha", "Beta")
    url = served.team_url(alpha.team.id)
    async with httpx.AsyncClient(timeout=30) as http:

        async def status(token: str | None, team_url: str = url) -> int:
            response = await http.post(team_url, json=RPC_BODY, headers=bearer_headers(token))
            if response.status_code == 401:
                assert response.headers["www-authenticate"].startswith("Bearer")
            return response.status_code

        card = (await http.get(url + CARD)).json()
        assert card["supportedInterfaces"][0]["url"] == url
        assert "bearer" in card["securitySchemes"] and alpha.token not in str(card)
        assert (await http.get(served.team_url("team-099") + CARD)).status_code == 404
        assert await status(alpha.token, served.base_url + "/a2a/teams/nobody/") == 404

        assert await status(None) == 401
        assert await status("jka2a_forged") == 401
        assert await status(beta.token) == 403
        assert await status(alpha.token) == 200
        too_big = await http.post(
            url, content=b"x" * (MAX_BODY_BYTES + 1), headers=bearer_headers(alpha.token)
        )
        assert too_big.status_code == 413
        rotated = await issue_token(runtime.lab, run_id, alpha.team.id)
        assert await status(alpha.token) == 401
        assert await status(rotated) == 200

    async with team_client(url, None) as anonymous:  # the SDK client without credentials
        with pytest.raises(A2AClientError, match="401"):
            await send(anonymous, "inbox")
    async with team_client(url, beta.token) as wrong_team:
        with pytest.raises(A2AClientError, match="403"):
            await send(wrong_team, "inbox")


async def test_a_team_cannot_see_or_touch_another_teams_tasks(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [alpha, beta] = await new_run_with_teams(runtime, "Alpha", "Beta")
    board = served.endpoint.executor.board
    notice, _ = await board.post(
        run_id,
        sender="judger",
        sender_message_id="official:alpha-1",
        recipient=alpha.team.id,
        type="feedback",
        payload={"summary": "official: fail"},
    )
    async with team_client(served.team_url(alpha.team.id), alpha.token) as client_a:
        waiting = await send(client_a, "inbox")
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    async with team_client(served.team_url(beta.team.id), beta.token) as client_b:
        own = await send(client_b, "inbox")
        with pytest.raises(TaskNotFoundError):
            await client_b.get_task(GetTaskRequest(id=waiting.id))
        with pytest.raises(TaskNotFoundError):
            await send(client_b, "ack_feedback", task_id=waiting.id)
        with pytest.raises(TaskNotFoundError):
            async for _ in client_b.subscribe(SubscribeToTaskRequest(id=waiting.id)):
                pass
        with pytest.raises(TaskNotFoundError):
            await client_b.cancel_task(CancelTaskRequest(id=waiting.id))
        listed = await client_b.list_tasks(ListTasksRequest())
        assert [t.id for t in listed.tasks] == [own.id]
    async with team_client(served.team_url(alpha.team.id), alpha.token) as client_a:
        with pytest.raises(TaskNotCancelableError):  # feedback is acknowledged, not cancelled
            await client_a.cancel_task(CancelTaskRequest(id=waiting.id))
        still = await client_a.get_task(GetTaskRequest(id=waiting.id))
        assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert await board.delivery_states(run_id, notice.id) == {alpha.team.id: "delivered"}


async def test_ask_posts_once_and_the_inbox_delivers_it(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [alpha, beta] = await new_run_with_teams(runtime, "Alpha", "Beta")
    question = new_data_part({"to": beta.team.id, "text": "which block size won for you?"})
    async with team_client(served.team_url(alpha.team.id), alpha.token) as client_a:
        message_id = uuid.uuid4().hex
        asked = await send(client_a, "ask", [question], message_id=message_id)
        again = await send(client_a, "ask", [question], message_id=message_id)  # a resend
        first, second = (get_data_parts(t.artifacts[0].parts)[0] for t in (asked, again))
        assert asked.status.state == again.status.state == TaskState.TASK_STATE_COMPLETED
        assert first["message_id"] == second["message_id"] and second["duplicate"] is True

        nowhere = await send(client_a, "ask", [new_data_part({"to": "team-042", "text": "hi"})])
        assert nowhere.status.state == TaskState.TASK_STATE_FAILED
        assert "unknown team" in get_message_text(nowhere.status.message)
        unknown = await send(client_a, "dance")
        assert unknown.status.state == TaskState.TASK_STATE_FAILED
        assert "submit_candidate" in get_message_text(unknown.status.message)

    async with team_client(served.team_url(beta.team.id), beta.token) as client_b:
        inbox = await send(client_b, "inbox")
    assert inbox.status.state == TaskState.TASK_STATE_COMPLETED  # no feedback: nothing to ack
    [delivered] = [get_data_parts(a.parts)[0] for a in inbox.artifacts]
    assert delivered["from"] == alpha.team.id and delivered["text"].startswith("which block")
    assert len(await board_messages(served, run_id)) == 1
    states = await served.endpoint.executor.board.delivery_states(run_id, first["message_id"])
    assert states == {beta.team.id: "acked"}


async def board_messages(served: Served, run_id: str) -> list[object]:
    return list(await served.endpoint.executor.board.messages(run_id, type="message"))
