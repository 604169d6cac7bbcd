"""Issue 17 point 1, end to end: a key given only in `JUSTKERNEL_PROVIDER_KEYS` drives a team's
model calls to the real OpenAI-compatible stand-in in `justkernel run`; the dashboard (its API,
and its model table in Chromium) shows the preset as having a key from the environment, without
the key; and the key is in no file of the data or config folder, no line of the processes'
output (their logs) and no member of the run's export.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, expect

from justkernel.settings.models import ModelPreset, save_local_preset
from tests.support.labs import open_folder
from tests.support.leaks import files_containing, zip_members_containing
from tests.support.openai_server import OpenAIServer, Reply, ToolCall
from tests.support.server import export_run, running_server
from tests.web.conftest import VIEWPORT, browser

__all__ = ["browser"]  # Debian's Chromium, the fixture of tests/web

KEY = f"sk-env-e2e-{secrets.token_hex(16)}"
NAME = "env provider keys"


def _reads_then_done(body: dict[str, Any]) -> Reply:
    """One tool call, then `[done]`: a team's whole session."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return Reply(text="[done]")
    return Reply(tool_calls=[ToolCall("read_file", {"file_path": "/spec.md", "limit": 3})])


def test_environment_key_drives_a_run_and_leaves_no_trace(browser: Browser) -> None:
    folder = open_folder("jk-env-keys-")
    data, config, local = folder / "data", folder / "config", folder / "models.local.toml"
    token = secrets.token_hex(16)
    with OpenAIServer(_reads_then_done, api_key=KEY) as server:
        keys = json.dumps({"openai_compatible": {"key": KEY, "base_url": server.base_url}})
        # a preset with no stored key, as the dashboard saves one for a keyless server
        preset = ModelPreset(
            name="envkeyed", provider="openai_compatible", model="m", base_url=server.base_url
        )
        save_local_preset(local, preset)
        files = {"JUSTKERNEL_MODELS_LOCAL_FILE": str(local), "JUSTKERNEL_PROVIDER_KEYS": keys}
        env = {
            **os.environ,
            "JUSTKERNEL_DATA_DIR": str(data),
            "JUSTKERNEL_CONFIG_DIR": str(config),
            "JUSTKERNEL_TOOLCHAIN": "cpu",
            **files,
        }
        argv = [sys.executable, "-m", "justkernel.cli.main", "run", "--model", "envkeyed"]
        argv += ["--teams", "1", "--minutes", "2", "--no-judger", "--name", NAME]
        ran = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        chats = [r for r in server.requests if r.path == "/v1/chat/completions"]
        assert len(chats) >= 2 and all(r.auth_ok for r in chats), chats
        (run_id,) = (
            sqlite3.connect(data / "justkernel.db")
            .execute("select id from runs where name = ?", (NAME,))
            .fetchone()
        )

        bodies: list[str] = [ran.stdout, ran.stderr]
        with running_server(data, config, JUSTKERNEL_API_TOKEN=token, **files) as srv:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=srv.base_url, headers=headers, timeout=60) as api:
                models = api.get("/api/config/models")
                (view,) = [m for m in models.json()["models"] if m["name"] == "envkeyed"]
                assert view["has_key"] is True and view["key_source"] == "environment"
                tested = api.post("/api/config/models/envkeyed/test")
                assert tested.json()["ok"] is True, tested.text
                for path in ("/api/runs", f"/api/runs/{run_id}/events", f"/api/runs/{run_id}"):
                    answer = api.get(path)
                    assert answer.status_code == 200, path
                    bodies.append(answer.text)
                bodies += [models.text, tested.text]
            # the dashboard's model table: a key, from the environment, and not the key
            context = browser.new_context(viewport=VIEWPORT, locale="en-US")
            page = context.new_page()
            page.goto(srv.link)
            page.wait_for_selector("body[data-ready=true]")
            page.click("[data-tab=config]")
            row = page.locator("tr[data-model='envkeyed']")
            expect(row).to_contain_text("key from the environment")
            bodies.append(page.content())
            context.close()
            bodies += srv.output
        assert server.requests[-1].auth_ok is True  # the connection test used it too

    bundle = export_run(data, config, run_id, folder / "run.jkb")
    secret = KEY.encode()
    assert [b for b in bodies if KEY in b] == []
    assert zip_members_containing(bundle, secret) == []
    assert files_containing(data, secret) == []  # database, logs, blobs, workspaces, checkpoints
    assert files_containing(config, secret) == []
    assert not Path(local).read_text().count(KEY)
