"""The A2A endpoint inside the real lab server: cards are served, team tokens are checked."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import httpx

from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.labs import open_folder
from tests.support.server import running_server, server_env


async def _new_run(data: Path, config: Path) -> str:
    lab = await open_lab(Settings(data_dir=data, config_dir=config))
    try:
        return (await lab.runs.create("a2a mounted")).id
    finally:
        await lab.close()


def test_the_lab_server_serves_a2a_behind_team_tokens(tmp_path: Path) -> None:
    folder = open_folder("jk-a2a-mounted-")
    data, config = folder / "data", tmp_path / "config"
    run_id = asyncio.run(_new_run(data, config))
    joined = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "a2a", "join", run_id, "--name", "outside"],
        env=server_env(data, config),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert joined.returncode == 0, joined.stderr
    team = re.search(r"team:\s+(\S+)", joined.stdout).group(1)  # type: ignore[union-attr]
    token = re.search(r"token:\s+(\S+)", joined.stdout).group(1)  # type: ignore[union-attr]
    with running_server(data, config) as srv:
        base = f"{srv.base_url}/a2a/teams/{team}/"
        card = httpx.get(base + ".well-known/agent-card.json", timeout=30)
        assert card.status_code == 200
        assert "submit_candidate" in card.text and token not in card.text
        request = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}
        headers = {"A2A-Version": "1.0"}
        assert httpx.post(base, json=request, headers=headers, timeout=30).status_code == 401
        wrong = {**headers, "Authorization": "Bearer not-a-token"}
        assert httpx.post(base, json=request, headers=wrong, timeout=30).status_code == 401
        mine = {**headers, "Authorization": f"Bearer {token}"}
        answer = httpx.post(base, json=request, headers=mine, timeout=30)
        assert answer.status_code == 200  # authenticated: a JSON-RPC answer (task not found)
        assert "error" in answer.json()
        # the lab's own API still needs the browser token
        assert httpx.get(f"{srv.base_url}/api/runs", timeout=30).status_code == 401
