"""Results in a real browser, from events written into the store: the Judger → candidate →
official result table for every point, a human approval that moves the Judger's candidate to
"approved" and becomes a `judger.approval` event, the leaderboard, the plot, usage as
reported; event text stays text; and the log's 160-row window with "earlier records"."""

from __future__ import annotations

import httpx
from playwright.sync_api import Page, expect

from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import (
    awaiting_candidate,
    candidate_status,
    in_lab,
    judger_events,
    sha,
    write_run,
)


def test_judger_table_leaderboard_and_a_human_approval(
    page: Page, server: RunningServer, api: httpx.Client, lab_dir
) -> None:
    events = judger_events("cand-aaa", "cand-bbb")

    async def write(lab):  # type: ignore[no-untyped-def]
        run_id = await write_run(lab, "judger table", events)
        await awaiting_candidate(lab, run_id, "cand-bbb", "team-002")
        return run_id

    run_id = in_lab(lab_dir / "data", lab_dir / "config", write)
    open_dashboard(page, server.base_url, run_id)
    page.click("[data-tab=results]")

    # one row per candidate; its official points fold out below it
    row = page.locator("#judger-table tr.cand[data-candidate='cand-aaa']")
    expect(row).to_have_count(1)
    first = row.locator("td").all_inner_texts()
    assert first[1] == "cand-aaa" and first[2] == "Qwen-001" and first[3] == "official pass"
    assert first[6] == "sub-0001"
    assert first[7] == sha("frozen-source")[:16]
    assert first[8:] == ["3/3", "2,557.75", "—"]
    row.locator("button.expand").click()
    points = page.locator("#judger-table tr.points-row[data-candidate='cand-aaa'] tr[data-point]")
    expect(points).to_have_count(3)
    assert points.nth(0).locator("td").all_inner_texts() == [
        "h01",
        "pass",
        "—",
        "0",
        "812.5",
        "640",
    ]
    third = points.nth(2).locator("td").all_inner_texts()
    assert third == ["h03", "pass", "—", "—", "455.25", "—"]  # missing, never 0
    expect(page.locator("#judger-table .champion")).to_contain_text("sub-0001")

    board = page.locator("#leaderboard tr[data-team='team-001'] td").all_inner_texts()
    assert board[1:4] == ["2,557.75", "3/3 (official pass)", "520,000,000"]
    page.click("#lang-btn")  # the coverage's status word follows the page's language
    expect(page.locator("#leaderboard tr[data-team='team-001'] td").nth(2)).to_have_text(
        "3/3 (官方通过)"
    )
    page.click("#lang-btn")
    expect(page.locator("#cycles-plot polyline")).to_have_count(2)
    usage = page.locator("#usage table").first.locator("tbody tr").first.locator("td")
    assert usage.all_inner_texts()[:6] == ["qwen", "1", "1,200", "300", "—", "200"]
    expect(page.locator("#throughput svg rect.job")).to_have_count(4)

    # a human decision from the table is an event in the log
    waiting = page.locator("#judger-table tr.cand[data-candidate='cand-bbb']")
    expect(waiting.locator("button.approve")).to_be_visible()
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "judger-table")
    waiting.locator("button.approve").click()
    expect(waiting).to_contain_text("approved (dashboard)")
    decided = api.get(f"/api/runs/{run_id}/events", params={"kind": "judger.approval"}).json()
    assert [e["payload"] for e in decided["events"]] == [
        {"by": "dashboard", "candidate_id": "cand-bbb", "decision": "approved"}
    ]
    again = api.post(f"/api/runs/{run_id}/candidates/cand-bbb/approve")
    assert again.status_code == 409  # decided once, never twice
    assert "approved_pending, not awaiting approval" in again.json()["detail"]
    status = in_lab(
        lab_dir / "data", lab_dir / "config", lambda lab: candidate_status(lab, run_id, "cand-bbb")
    )
    assert status == "approved_pending"  # the Judger submits it on its next pass
    unknown = api.post(f"/api/runs/{run_id}/candidates/cand-zzz/approve")
    assert unknown.status_code == 400 and "cand-zzz" in unknown.json()["errors"]["candidate_id"]

    # event text is shown as text: the hostile payload creates no element and runs nothing
    page.click("[data-tab=live]")
    page.select_option("#team-select", "team-001")
    expect(page.locator("#log-list")).to_contain_text('<img src=x onerror="window.__pwned=1">')
    assert page.locator("#log-list img, #log-list script").count() == 0
    assert page.evaluate("() => window.__pwned === undefined")
    # the Judger's session shows its own events
    page.click("#session-judger")
    expect(page.locator("#log-list > li.ev")).to_have_count(8)
    kinds = page.locator("#log-list > li.ev").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "candidate.frozen" and "official.result" in kinds


def test_the_log_keeps_160_rows_and_loads_earlier_records(
    page: Page, server: RunningServer, lab_dir
) -> None:
    events = [NewEvent("team.registered", {"display_name": "Bulk-001"}, "team-001")]
    events += [
        NewEvent("tool.call", {"id": f"c{i}", "name": "read_file", "args": "{}"}, "team-001")
        for i in range(400)
    ]
    run_id = in_lab(
        lab_dir / "data", lab_dir / "config", lambda lab: write_run(lab, "bulk log", events)
    )
    open_dashboard(page, server.base_url, run_id)
    rows = page.locator("#log-list > li.ev")
    expect(rows).to_have_count(160)
    assert rows.first.get_attribute("data-seq") == "242"
    assert page.locator("#log-list > li.arrive").count() == 0  # the first load does not animate
    page.click("#log-earlier")
    expect(rows).to_have_count(320)
    assert rows.first.get_attribute("data-seq") == "82"
    expect(page.locator("#log-follow")).to_be_visible()
    page.click("#log-follow")
    expect(rows).to_have_count(160)
