"""Found by the HTTP fuzz on PostgreSQL: an outside A2A agent's `ask` whose text (or message
id, or addressee) holds a NUL (`"\\u0000"`, legal JSON) reached the lab database, which refuses
NUL in text; the task failed as "the lab could not do this" and the lab logged a database
error, as often as the agent liked. The agent sent something no field of the lab can hold: the
call is refused up front as the protocol's invalid-params error (-32602), naming the NUL."""

from __future__ import annotations

import httpx

from justkernel.a2a.endpoint import open_a2a
from justkernel.a2a.external import join_external
from justkernel.app import lab_board
from justkernel.lab import Lab
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState
from justkernel.web.control import RunController

INVALID_PARAMS = -32602


def _ask(text: str, message_id: str = "m-1", to: str = "all") -> dict[str, object]:
    message = {
        "role": "ROLE_USER",
        "messageId": message_id,
        "parts": [{"data": {"to": to, "text": text}}],
        "metadata": {"skill": "ask"},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


async def test_a_nul_in_an_a2a_call_is_refused_up_front(lab: Lab) -> None:
    controller = RunController(lab, lab_board(lab))
    run = await lab.runs.create("outside")
    joined = await join_external(lab, run.id, "Outsider")
    headers = {"authorization": f"Bearer {joined.token}", "A2A-Version": "1.0"}
    url = f"/a2a/teams/{joined.team.id}/"
    try:
        async with open_a2a(lab, controller.evaluator, board=controller.board) as a2a:
            auth = AuthState.create(lab.settings.config_dir, lab.settings.resolved_data_dir)
            transport = httpx.ASGITransport(
                app=create_app(lab, auth, controller=controller, a2a=a2a)
            )
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1:4173"
            ) as http:
                for body in (_ask("a\x00b"), _ask("hi", message_id="m\x00"), _ask("hi", to="\x00")):
                    answer = await http.post(url, json=body, headers=headers)
                    assert answer.status_code == 200, answer.text
                    error = answer.json().get("error")
                    assert error is not None, answer.text
                    assert error["code"] == INVALID_PARAMS and "NUL" in error["message"], error
                posted = await http.post(url, json=_ask("a clean question"), headers=headers)
                state = posted.json()["result"]["task"]["status"]["state"]
                assert state == "TASK_STATE_COMPLETED", posted.text
    finally:
        await controller.close()
