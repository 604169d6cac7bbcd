"""The live view in a real browser: an offline run started from the dashboard streams into the
work log, the todo list and the A2A graph; reading back pauses insertion; the motion switch
stops every animation in place; the language follows the browser and switches."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from tests.support.server import RunningServer
from tests.support.views import wait_view
from tests.web.conftest import VIEWPORT, open_dashboard, screenshot

ROWS = "#log-list > li.ev"


def _last_seq(page: Page) -> int:
    return int(page.locator(ROWS).last.get_attribute("data-seq") or 0)


def _start_offline_run(page: Page) -> str:
    """Start a single offline team from the Configuration tab, as a user would, on the lab's
    default target (Ascend C; the suite's server defaults to the C port)."""
    page.click("[data-tab=config]")
    form = page.locator("#task-form")
    expect(form).to_be_visible()
    form.locator("[name=name]").fill("live view test")
    form.locator("[name=mode]").select_option("single")
    form.locator("[name=minutes]").fill("")
    form.locator("[name=toolchain]").select_option(DEFAULT_TOOLCHAIN)
    before = page.evaluate("location.hash")
    page.click("#task-start")
    page.wait_for_function(
        "(before) => location.hash.includes('run=') && location.hash !== before", arg=before
    )
    return page.evaluate("decodeURIComponent(location.hash.split('run=')[1])")


def test_offline_run_streams_into_the_log_the_todos_and_the_graph(
    page: Page, server: RunningServer, api: httpx.Client, shared: dict[str, Any]
) -> None:
    open_dashboard(page, server.base_url)
    run_id = _start_offline_run(page)
    shared["run_id"] = run_id
    page.click("[data-tab=live]")

    # the run is labelled offline; events arrive live (only they animate)
    expect(page.locator("#run-badges .chip.offline")).to_be_visible()
    page.wait_for_selector(f"{ROWS}.arrive", timeout=90_000)
    expect(page.locator(f"{ROWS} .tool").first).to_be_visible()  # tool names are shown
    # the todo list as the agent keeps it: pending / in progress / done, never "passed"
    todos = page.locator("#todo-list li.todo")
    expect(todos.first).to_be_visible(timeout=60_000)
    expect(page.locator("#todo-list")).to_contain_text("Measure the baseline")
    states = set(page.locator("#todo-list .todo-state").all_inner_texts())
    assert states <= {"pending", "in progress", "done"}, states
    # the graph has the team as a node, pulsing while its turn runs
    expect(page.locator("#graph g.node[data-team='team-001']")).to_be_visible()
    expect(page.locator("#graph g.node.running")).to_have_count(1, timeout=60_000)

    # details of a tool return are expandable and show the actual return
    result = page.locator(f"{ROWS}.kind-tool-result").first
    result.locator("summary").click()
    expect(result.locator("details pre")).to_be_visible()

    # reading back pauses insertion behind a "new events" marker
    page.wait_for_function(
        "() => { const l = document.querySelector('#log-list');"
        " return l.scrollHeight > l.clientHeight + 200; }",
        timeout=90_000,
    )
    page.locator("#log-list").hover()
    page.mouse.wheel(0, -5000)
    expect(page.locator("#log-follow")).to_be_visible()
    paused_at = _last_seq(page)
    marker = page.locator("#log-new")
    expect(marker).to_be_visible(timeout=120_000)
    expect(marker).to_contain_text("new events")
    assert _last_seq(page) == paused_at, "a row was inserted while reading back"
    page.click("#log-follow")
    expect(marker).to_be_hidden()
    expect(page.locator("#log-follow")).to_be_hidden()
    assert _last_seq(page) > paused_at
    assert page.locator(ROWS).count() <= 160

    # one switch stops all motion without changing what is shown
    nodes = page.locator("#graph g.node").count()
    page.uncheck("#motion-toggle")
    assert page.evaluate("document.body.classList.contains('motion-off')")
    assert page.evaluate(
        "[...document.querySelectorAll('svg')].every(s => s.animationsPaused())"
        " && document.getAnimations().every(a => a.playState !== 'running')"
    )
    assert page.locator("#graph g.node").count() == nodes
    page.check("#motion-toggle")
    assert page.evaluate("[...document.querySelectorAll('svg')].every(s => !s.animationsPaused())")

    screenshot(page, "live")


def test_language_defaults_from_the_browser_and_switches(
    browser: Browser, signed_in: Any, server: RunningServer, shared: dict[str, Any]
) -> None:
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        page = context.new_page()
        open_dashboard(page, server.base_url, shared.get("run_id"))
        expect(page.locator("[data-tab=live]")).to_have_text("实时")
        expect(page.locator("#log-panel h2")).to_have_text("工作日志")
        page.click("#lang-btn")
        expect(page.locator("[data-tab=live]")).to_have_text("Live")
        expect(page.locator("#log-panel h2")).to_have_text("Work log")
        assert page.evaluate("document.documentElement.lang") == "en"
    finally:
        context.close()


def test_pause_and_resume_from_the_dashboard(
    page: Page, server: RunningServer, api: httpx.Client, offline_run: str
) -> None:
    run_id = offline_run
    open_dashboard(page, server.base_url, run_id)
    page.click("[data-tab=config]")
    if api.get(f"/api/runs/{run_id}/view").json()["dispatch"] == "running":
        page.click("#run-pause")
        wait_view(api, run_id, lambda v: v["dispatch"] == "stopped")
    expect(page.locator("#run-resume")).to_be_enabled()
    page.click("#run-resume")
    wait_view(api, run_id, lambda v: v["dispatch"] == "running")
    expect(page.locator("#run-pause")).to_be_enabled()
    page.click("#run-pause")  # leave the CPU to the other tests
    view = wait_view(api, run_id, lambda v: v["dispatch"] == "stopped")
    assert view["dispatch_reason"] == "stopped"


def test_teams_added_and_removed_from_the_dashboard(
    page: Page, server: RunningServer, api: httpx.Client, offline_run: str
) -> None:
    """Add a team (its model and a member's model chosen) to the paused run, remove it (a
    second click confirms): it leaves the live view and its record stays in the collapsed
    "exited" section."""
    run_id = offline_run
    open_dashboard(page, server.base_url, run_id)
    page.click("[data-tab=config]")
    form = page.locator("#add-team-form")
    form.locator("[name=model]").select_option("offline")
    form.locator("[name='members.reviewer']").select_option("offline")
    form.locator("button[type=submit]").click()
    row = page.locator("#run-teams li[data-team='team-002']")
    expect(row).to_contain_text("reviewer: offline")
    registered = api.get(
        f"/api/runs/{run_id}/events", params={"kind": "team.registered", "team": "team-002"}
    ).json()["events"]
    assert registered[0]["payload"]["config"]["member_models"] == {"reviewer": "offline"}

    remove = row.locator("button.remove")
    remove.click()  # the first click only asks again (issue #16: delete had no confirmation)
    expect(remove).to_have_text("Click again to confirm")
    expect(row).to_have_count(1)
    assert api.get(f"/api/runs/{run_id}/view").json()["teams"][-1]["status"] != "exited"
    remove.click()
    expect(page.locator("#run-teams li[data-team='team-002']")).to_have_count(0)
    page.click("[data-tab=live]")
    exited = page.locator("#exited-section")
    expect(exited).to_be_visible()
    expect(page.locator("#exited-summary")).to_contain_text("(1)")
    expect(page.locator("#graph g.node[data-team='team-002']")).to_have_count(0)
    assert page.locator("#team-select option[value='team-002']").count() == 0
    exited.locator("summary").click()
    expect(page.locator("#exited-body")).to_contain_text("removed from the dashboard")
