"""The run's target through the real dashboard API: the task settings carry it (checked like
every other field), the start passes it to the run, and the lab's default shows."""

from __future__ import annotations

import httpx


def test_the_task_settings_choose_the_runs_target(api: httpx.Client) -> None:
    task = api.get("/api/config/task").json()
    assert task["default_toolchain"] == "cpu"  # the suite's pin (tests/conftest.py)
    assert task["task"]["toolchain"] is None  # empty: the lab's default

    bad = api.put("/api/config/task", json={"name": "t", "toolchain": "gpu"})
    assert bad.status_code == 400
    assert "toolchain" in bad.json()["errors"]

    chosen = {"name": "an ascendc run", "mode": "single", "toolchain": "ascendc-cpu"}
    saved = api.put("/api/config/task", json=chosen)
    assert saved.status_code == 200, saved.text
    assert api.get("/api/config/task").json()["task"]["toolchain"] == "ascendc-cpu"

    started = api.post("/api/task/start", json=chosen)
    assert started.status_code == 200, started.text
    run_id = started.json()["run"]["id"]
    try:
        run = api.get(f"/api/runs/{run_id}").json()
        assert run["meta"]["toolchain"] == "ascendc-cpu"
        assert run["meta"]["task"]["toolchain"] == "ascendc-cpu"
    finally:
        api.post(f"/api/runs/{run_id}/pause")
        api.put("/api/config/task", json={"name": "dashboard run"})  # as the next test expects
