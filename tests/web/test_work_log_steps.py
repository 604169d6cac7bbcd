"""The work log as steps in a real browser (issue #16, points 7, 8, 11 and "the work log as
steps"): a tool request and its return are one row with duration and the model call's tokens,
arguments and returns are foldable data (write_todos a list, not a Python repr), filters by
kind, tool, team and text, plan badges that come from receipts, and Chinese words for kinds,
statuses and the server's reasons."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import VIEWPORT, open_dashboard, screenshot

ROWS = "#log-list > li.ev"


def _step(page: Page, tool: str):
    return page.locator(f"{ROWS}.step[data-tool='{tool}']")


def test_a_tool_request_and_its_return_are_one_step(
    page: Page, server: RunningServer, steps_run: str
) -> None:
    open_dashboard(page, server.base_url, steps_run)
    expect(_step(page, "read_file")).to_have_count(1)
    assert page.locator(f"{ROWS}[data-kind='tool.result']").count() == 0  # joined, not apart
    step = _step(page, "read_file")
    # the return was the later event, so the step sits there and carries its sequence number
    assert step.get_attribute("data-seq") == "8"
    expect(step.locator(".ev-head")).to_contain_text("tool step")
    expect(step.locator(".step-state")).to_have_text("returned")
    expect(step.locator(".meta")).to_contain_text("0.25 s")
    expect(step.locator(".meta")).to_contain_text("model call #3: 1,200 → 300 tok")

    # arguments and return are pretty-printed data, each object and array foldable
    step.locator("summary").click()
    ret = step.locator(".step-part.return pre.json")
    expect(ret).to_be_visible()
    text = ret.inner_text()
    assert '\n  "ok": true,' in text and '"size": 123' in text, text
    expect(step.locator(".step-part.arguments .json")).to_contain_text(
        '"path": "op_kernel/add.cpp"'
    )
    meta = ret.locator(".j-box").nth(2)  # {, lines [, meta {
    meta.locator("> .j-toggle").click()
    expect(meta.locator("> .j-inner")).to_be_hidden()
    assert '"size"' not in ret.inner_text()
    meta.locator("> .j-toggle").click()
    expect(ret).to_contain_text('"size": 123')

    # write_todos: the list as a list, never the Python repr it returned
    todos = _step(page, "write_todos")
    todos.locator("summary").click()
    expect(todos.locator(".step-part.arguments .todo-view li")).to_have_count(2)
    expect(todos.locator(".step-part.arguments")).to_contain_text("Tile the rows")
    expect(todos.locator(".step-part.return")).to_contain_text("◐ Tile the rows")
    assert "{'content'" not in todos.inner_text()
    expect(todos.locator(".ev-body")).to_have_text("2 tasks, 1 done")
    screenshot(page, "work-log-steps")


def test_plan_badges_come_from_receipts(page: Page, server: RunningServer, steps_run: str) -> None:
    open_dashboard(page, server.base_url, steps_run)
    plans = page.locator("#plan-body .plans")
    badge_1 = plans.locator("li[data-experiment='1'] .plan-status")
    expect(badge_1).to_have_text("incorrect")  # was "planned" (issue #16, 8)
    expect(badge_1).to_have_class("chip plan-status bad")
    # a full receipt outranks the probe before it
    expect(plans.locator("li[data-experiment='2'] .plan-status")).to_have_text("measured correct")
    # the plan's row in the work log says the same
    logged = page.locator(f"{ROWS}.kind-experiment-planned").first
    expect(logged.locator(".plan-status")).to_have_text("incorrect")


def test_filters_by_kind_tool_team_and_text(
    page: Page, server: RunningServer, steps_run: str
) -> None:
    open_dashboard(page, server.base_url, steps_run)
    rows = page.locator(f"{ROWS}:visible")
    expect(rows).to_have_count(11)  # team-001: 13 events, two steps joining four of them
    page.select_option("#log-kind", "steps")
    expect(rows).to_have_count(2)
    page.select_option("#log-tool", "write_todos")
    expect(rows).to_have_count(1)
    expect(page.locator("#log-count")).to_contain_text("1 of 2 shown")
    page.select_option("#log-tool", "")
    page.select_option("#log-kind", "")
    page.fill("#log-search", "double buffer")  # the plan's hypothesis
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-kind", "experiment.planned")
    page.fill("#log-search", "size")  # found inside a folded return
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-tool", "read_file")
    page.fill("#log-search", "")

    # all teams in one log, then one of them by the log's own team filter
    expect(page.locator("#log-team")).to_be_hidden()
    page.select_option("#team-select", "")
    expect(page.locator("#log-team")).to_be_visible()
    expect(rows).to_have_count(14)
    page.select_option("#log-team", "team-002")
    expect(rows).to_have_count(2)
    teams = rows.evaluate_all("els => els.map(e => e.dataset.team)")
    assert teams == ["team-002", "team-002"], teams


def test_the_chinese_work_log_reads_chinese(
    browser: Browser, signed_in: Any, server: RunningServer, steps_run: str
) -> None:
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN", storage_state=signed_in)
    try:
        page = context.new_page()
        open_dashboard(page, server.base_url, steps_run)
        log = page.locator("#log-list")
        expect(_step(page, "read_file").locator(".ev-head")).to_contain_text("工具步骤")
        expect(_step(page, "read_file").locator(".meta")).to_contain_text("0.25 秒")
        expect(page.locator("#plan-body li[data-experiment='1'] .plan-status")).to_have_text(
            "结果错误"
        )
        expect(log.locator("[data-kind='team.turn_end']")).to_contain_text("团队已没有可尝试的方案")
        expect(log.locator(".kind-experiment-receipt").first).to_contain_text("个用例")
        expect(log.locator(".kind-experiment-receipt").first).to_contain_text("结果错误")
        page.select_option("#team-select", "")
        expect(log.locator("[data-kind='run.dispatch_stopped']")).to_contain_text("已到时间上限")
        page.select_option("#team-select", "team-001")
        # no English word of ours is left in the rows' labels and chips
        labels = page.locator(f"{ROWS} .label, {ROWS} .chip").all_inner_texts()
        english = [x for x in labels if x.isascii() and any(c.isalpha() for c in x)]
        assert english == [], english
        _step(page, "read_file").locator("summary").click()
        expect(_step(page, "read_file").locator(".step-part.return h4")).to_have_text("返回")
        screenshot(page, "work-log-steps-zh")
    finally:
        context.close()


def test_a_step_whose_result_never_came_is_not_running(
    browser: Browser, signed_in: Any, server: RunningServer, steps_run: str
) -> None:
    """team-002's grep never returned and the dispatch stopped after it: the step says so
    ("no result"), never "running", in English and in Chinese."""
    for locale, words in (("en-US", "no result"), ("zh-CN", "无结果")):
        context = browser.new_context(viewport=VIEWPORT, locale=locale, storage_state=signed_in)
        try:
            page = context.new_page()
            open_dashboard(page, server.base_url, steps_run)
            page.select_option("#team-select", "team-002")
            step = _step(page, "grep")
            expect(step).to_have_attribute("data-state", "no-result")
            expect(step.locator(".step-state")).to_have_text(words)
            returned = _step(page, "read_file")
            page.select_option("#team-select", "team-001")
            expect(returned).to_have_attribute("data-state", "returned")
        finally:
            context.close()


def test_earlier_records_hide_when_the_first_record_shows(
    page: Page, server: RunningServer, steps_run: str
) -> None:
    """The steps run holds 16 events: record #1 is on screen, so nothing is earlier."""
    open_dashboard(page, server.base_url, steps_run)
    expect(page.locator(f"{ROWS}[data-seq='1']")).to_be_attached()
    expect(page.locator("#log-earlier")).to_be_hidden()
    page.select_option("#team-select", "")
    expect(page.locator(f"{ROWS}[data-seq='1']")).to_be_attached()
    expect(page.locator("#log-earlier")).to_be_hidden()
