"""The Judger table in a real browser (issue #16, points 3, 4, 9): one row per candidate with
its official points folded below it, a candidate the Judger accepted reads "reviewed" (not
"under review" for ever), a nomination waiting for a human has its Approve / Reject buttons,
why an official result failed (the judge's code and the compiler's lines) is shown, each id
links to its lineage node, and every word is in English and Chinese."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import DIAGNOSTICS, in_lab, write_judger_table_run


def test_the_judger_table_has_one_row_per_candidate_and_says_why_a_result_failed(
    page: Page, server: RunningServer, lab_dir
) -> None:
    run_id = in_lab(lab_dir / "data", lab_dir / "config", write_judger_table_run)
    page.set_viewport_size({"width": 1440, "height": 900})
    open_dashboard(page, server.base_url, run_id)
    page.click("[data-tab=results]")

    rows = page.locator("#judger-table tr.cand")
    expect(rows).to_have_count(4)  # 4 candidates; before: 15 + 15 + 1 + 1 rows
    ids = rows.evaluate_all("els => els.map(e => e.dataset.candidate)")
    assert ids == ["cand-aaa", "cand-bbb", "cand-ccc", "cand-ddd"]
    expect(page.locator("#judger-table tr.points-row:visible")).to_have_count(0)

    def cells(cand: str) -> list[str]:
        return page.locator(f"#judger-table tr.cand[data-candidate='{cand}'] td").all_inner_texts()

    # accepted by the rules and waiting to beat the bar: "reviewed", never "under_review"
    assert cells("cand-ccc")[3] == "reviewed"
    waiting = page.locator("#judger-table tr.cand[data-candidate='cand-ddd']")
    expect(waiting.locator("button.approve")).to_be_visible()
    expect(waiting.locator("button.reject")).to_be_visible()

    # why the official result failed: the judge's code and the compiler's own lines
    failed = page.locator("#judger-table tr.cand[data-candidate='cand-bbb']")
    assert cells("cand-bbb")[3] == "official fail" and cells("cand-bbb")[8] == "0/15"
    failure = failed.locator("td.failure")
    expect(failure.locator(".outcome")).to_have_text("compile failed")
    failure.locator("summary").click()
    expect(failure.locator("pre")).to_have_text("\n".join(DIAGNOSTICS))

    # the points fold out below their candidate
    passed = page.locator("#judger-table tr.cand[data-candidate='cand-aaa']")
    assert cells("cand-aaa")[8:10] == ["15/15", "1,620"]
    passed.locator("button.expand").click()
    points = page.locator("#judger-table tr.points-row[data-candidate='cand-aaa'] tr[data-point]")
    expect(points).to_have_count(15)
    assert points.nth(0).locator("td").all_inner_texts() == [
        "h01", "pass", "passed", "—", "101", "—"
    ]  # fmt: skip

    # each id opens its lineage node
    link = passed.locator("a.lineage-link")
    assert link.get_attribute("href") == f"#run={run_id}&lineage=cand-aaa"
    screenshot(page, "judger-table-grouped-en")

    page.click("#lang-btn")
    expect(page.locator("#judger-table tr.cand[data-candidate='cand-ccc'] td").nth(3)).to_have_text(
        "已评审"
    )
    expect(failure.locator(".outcome")).to_have_text("编译失败")
    screenshot(page, "judger-table-grouped-zh")
