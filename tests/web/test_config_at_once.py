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


def test_a_worker_host_ssh_cannot_use_is_refused_field_by_field(
    lab: tuple[httpx.Client, Path, str],
) -> None:
    api, folder, _ = lab
    url = "/api/config/workers/hosts"
    host = {"name": "evil", "user": "lab", "key_file": str(folder / "no-such-key")}
    injected = api.post(url, json={**host, "address": "not an address;rm -rf /"})
    assert injected.status_code == 400, injected.text
    assert injected.json()["errors"]["address"] == "must be a host name or an IP address"
    option = api.post(url, json={**host, "address": "-oProxyCommand=touch /tmp/x"})
    assert option.status_code == 400 and "address" in option.json()["errors"]
    user = api.post(url, json={**host, "address": "10.0.0.5", "user": "-oProxyCommand=x"})
    assert user.status_code == 400 and "user" in user.json()["errors"]

    missing = api.post(url, json={**host, "address": "npu-1.lab.example"})
    assert missing.status_code == 400, missing.text
    assert missing.json()["errors"]["key_file"].startswith("no such file on the lab machine")
    folder_key = api.post(url, json={**host, "address": "10.0.0.5", "key_file": str(folder)})
    assert folder_key.status_code == 400 and "key_file" in folder_key.json()["errors"]
    hosts = folder / "hosts.toml"
    assert not hosts.exists() or "evil" not in hosts.read_text()
    assert api.get("/api/config/workers").json()["hosts"] == []


def test_a_model_preset_with_numbers_or_names_out_of_bounds_is_refused(
    lab: tuple[httpx.Client, Path, str],
) -> None:
    api, _, _ = lab
    preset = {"name": "huge", "provider": "offline", "model": "offline-playbook"}
    output = api.post("/api/config/models", json={**preset, "max_output_tokens": 10**20})
    assert output.status_code == 400, output.text
    assert "1000000" in output.json()["errors"]["max_output_tokens"]
    window = api.post("/api/config/models", json={**preset, "context_window": 10**9})
    assert window.status_code == 400 and "context_window" in window.json()["errors"]
    label = api.post("/api/config/models", json={**preset, "display_name": "x" * 3000})
    assert label.status_code == 400, label.text
    assert "80" in label.json()["errors"]["display_name"]
    names = [m["name"] for m in api.get("/api/config/models").json()["models"]]
    assert "huge" not in names
    # the bounds themselves are accepted: the largest documented output limit fits
    fine = {**preset, "max_output_tokens": 128_000, "display_name": "x" * 80}
    assert api.post("/api/config/models", json=fine).status_code == 200
