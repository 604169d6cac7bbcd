"""The run's target through the real dashboard: the task settings carry it (checked like
every other field, a select in the Configuration page), the start passes it to the run, the
lab's default shows, and the run header names the run's target."""

from __future__ import annotations

import httpx
from playwright.sync_api import Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard


def test_the_task_settings_choose_the_runs_target(
    page: Page, server: RunningServer, api: httpx.Client
) -> None:
    # a task saved without a target (earlier tests of this server may have saved one) runs on
    # the lab's default
    assert api.put("/api/config/task", json={"name": "target test"}).status_code == 200
    task = api.get("/api/config/task").json()
    assert task["default_toolchain"] == "cpu"  # the suite's pin (tests/conftest.py)
    assert task["task"]["toolchain"] is None  # empty: the lab's default

    bad = api.put("/api/config/task", json={"name": "t", "toolchain": "gpu"})
    assert bad.status_code == 400
    assert "toolchain" in bad.json()["errors"]

    # the select in the task settings: the lab's default first, then the three targets
    open_dashboard(page, server.base_url)
    page.click("[data-tab=config]")
    select = page.locator("#task-form [name=toolchain]")
    expect(select).to_have_value("")
    options = select.locator("option")
    expect(options).to_have_count(4)
    expect(options.first).to_contain_text("lab default (cpu)")
    select.select_option("ascendc-cpu")
    page.click("#task-save")
    expect(page.locator("#task-form .error[data-error-for='toolchain']")).to_be_empty()
    saved = api.get("/api/config/task").json()["task"]
    assert saved["toolchain"] == "ascendc-cpu"

    active = api.get("/api/config/task").json()["status"]["active_run"]
    if active:  # an earlier test's run: one run is driven at a time
        api.post(f"/api/runs/{active}/pause")
    chosen = {**saved, "name": "an ascendc run", "mode": "single"}
    started = api.post("/api/task/start", json=chosen)
    assert started.status_code == 200, started.text
    run_id = started.json()["run"]["id"]
    try:
        run = api.get(f"/api/runs/{run_id}").json()
        assert run["meta"]["toolchain"] == "ascendc-cpu"
        assert run["meta"]["task"]["toolchain"] == "ascendc-cpu"
        # the page is open already: only the hash changes, as with a `#run=` link pasted
        # into an open tab, and the dashboard follows it to the new run
        open_dashboard(page, server.base_url, run_id)
        expect(page.locator("#run-select")).to_have_value(run_id)
        expect(page.locator("#run-badges")).to_contain_text("target: ascendc-cpu")
    finally:
        api.post(f"/api/runs/{run_id}/pause")
        api.put("/api/config/task", json={"name": "dashboard run"})  # as the next test expects
