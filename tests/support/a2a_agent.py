"""An outside A2A agent as a test drives one: the fixture kernel's editable files for a
candidate, and plain JSON-RPC calls (`SendMessage`, `GetTask`) on a team's endpoint of a real
lab server, with the team's bearer token. Plain HTTP, so a sync test (Playwright's) can call it."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx

FIXTURE_KERNEL = Path(__file__).resolve().parents[1] / "fixtures" / "kernels" / "fast_fused_blocked"
DONE = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED")


def fixture_files() -> dict[str, str]:
    return {
        p.relative_to(FIXTURE_KERNEL).as_posix(): p.read_text()
        for p in sorted(FIXTURE_KERNEL.rglob("*"))
        if p.is_file()
    }


def _call(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
    answer = httpx.post(url, json=body, headers=headers, timeout=600)
    assert answer.status_code == 200, answer.text
    reply = answer.json()
    assert "error" not in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


def send_skill(
    url: str, token: str, skill: str, data: dict[str, Any], *, limit: float = 600
) -> dict[str, Any]:
    """Send one message asking for `skill` and wait until its task is done; the task."""
    message = {
        "role": "ROLE_USER",
        "messageId": uuid.uuid4().hex,
        "parts": [{"data": data}],
        "metadata": {"skill": skill},
    }
    task = _call(url, token, "SendMessage", {"message": message})["task"]
    deadline = time.monotonic() + limit
    while task["status"]["state"] not in DONE:
        assert time.monotonic() < deadline, task["status"]
        time.sleep(0.5)
        task = _call(url, token, "GetTask", {"id": task["id"]})
    return task  # type: ignore[no-any-return]
