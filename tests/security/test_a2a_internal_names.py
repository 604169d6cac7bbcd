"""Found by the HTTP fuzz: when the lab itself failed a `submit_candidate` (here: its workers
configuration is broken, so no evaluator can start), the outside agent read the lab's own
exception class in the task's status message: "the lab could not do this (Conflict); retry
later". An outside A2A agent learns nothing of the lab's internals: the message says the lab
failed and to retry; the lab's log keeps the details."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx

from justkernel.a2a.endpoint import open_a2a
from justkernel.a2a.external import join_external
from justkernel.app import lab_board
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState
from justkernel.web.control import RunController

BROKEN_WORKERS = '[local]\nslots = "many"\n'
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Conflict|Refused)\b|\([A-Z]\w+\)")


async def test_a_lab_failure_names_no_exception_class(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(BROKEN_WORKERS)
    settings = Settings(
        data_dir=tmp_path / "data", config_dir=tmp_path / "config", hosts_file=hosts
    )
    lab = await open_lab(settings)
    controller = RunController(lab, lab_board(lab))
    try:
        run = await lab.runs.create("outside")
        joined = await join_external(lab, run.id, "Outsider")
        async with open_a2a(lab, controller.evaluator, board=controller.board) as a2a:
            auth = AuthState.create(settings.config_dir, settings.resolved_data_dir)
            app = create_app(lab, auth, controller=controller, a2a=a2a)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1:4173"
            ) as http:
                message = {
                    "role": "ROLE_USER",
                    "messageId": uuid.uuid4().hex,
                    "parts": [{"data": {"op_kernel/cmg_kernel.c": "int x;\n"}}],
                    "metadata": {"skill": "submit_candidate"},
                }
                call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
                answer = await http.post(
                    f"/a2a/teams/{joined.team.id}/",
                    json={**call, "params": {"message": message}},
                    headers={"authorization": f"Bearer {joined.token}", "A2A-Version": "1.0"},
                )
    finally:
        await controller.close()
        await lab.close()
    assert answer.status_code == 200, answer.text
    task = answer.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
    said = task["status"]["message"]["parts"][0]["text"]
    assert "the lab could not do this" in said, said
    assert not EXCEPTION_NAME.search(answer.text), said
