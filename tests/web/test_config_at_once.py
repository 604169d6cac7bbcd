"""Configuration that works at once, and configuration the lab refuses (issue #16, 1 and 12),
on the real `justkernel serve` through its HTTP API.

The server opens its run runtime on first use and keeps it: a preset saved after that must be
usable by "Add team" and "Start" without a restart, and a preset removed from the local file
must be refused with a 400 naming the field (never a KeyError's 500). Worker hosts and model
presets with values no lab can use are refused field by field, and nothing is written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.server import folder_server
from tests.web.conftest import open_folder


async def _live_run(settings: Settings) -> str:
    lab = await open_lab(settings)
    try:
        return (await lab.runs.create("presets at once")).id
    finally:
        await lab.close()


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[httpx.Client, Path, str]]:
    """A server of its own (the test starts a run; the shared server's runs stay as they are),
    signed in, with one live run that is not driven."""
    folder = open_folder("jk-config-")
    run_id = asyncio.run(
        _live_run(Settings(data_dir=folder / "data", config_dir=folder / "config"))
    )
    with folder_server(folder) as server:
        signed = httpx.get(server.link, follow_redirects=False, timeout=30)
        assert signed.status_code == 303, signed.text
        with httpx.Client(base_url=server.base_url, cookies=signed.cookies, timeout=120) as api:
            yield api, folder, run_id


def _add_team(api: httpx.Client, run_id: str, model: str) -> httpx.Response:
    return api.post(f"/api/runs/{run_id}/teams", json={"model": model})


def test_a_preset_saved_in_the_dashboard_is_usable_at_once_and_a_removed_one_is_refused(
    lab: tuple[httpx.Client, Path, str],
) -> None:
    api, folder, run_id = lab
    first = _add_team(api, run_id, "offline")  # opens the server's runtime
    assert first.status_code == 200, first.text

    saved = api.post(
        "/api/config/models",
        json={"name": "fresh", "provider": "offline", "model": "offline-playbook"},
    )
    assert saved.status_code == 200, saved.text
    assert "fresh" in api.get("/api/config/task").json()["presets"]  # what the dropdown offers

    added = _add_team(api, run_id, "fresh")
    assert added.status_code == 200, added.text
    assert added.json()["team"]["model_preset"] == "fresh"

    task = {"name": "fresh preset", "mode": "single", "teams": [{"model": "fresh"}]}
    started = api.post("/api/task/start", json=task)
    assert started.status_code == 200, started.text
    new_run = started.json()["run"]["id"]
    assert api.post(f"/api/runs/{new_run}/pause").status_code == 200

    # the user removes the preset from models.local.toml by hand: refused, field by field
    (folder / "models.local.toml").write_text("", encoding="utf-8")
    gone = _add_team(api, run_id, "fresh")
    assert gone.status_code == 400, gone.text
    assert gone.json()["errors"] == {"model": "unknown model preset 'fresh'"}
    # the saved task still names it: Start with no body starts the saved task
    again = api.post("/api/task/start")
    assert again.status_code == 400, again.text
    assert again.json()["errors"] == {"teams.0.model": "unknown model preset 'fresh'"}
