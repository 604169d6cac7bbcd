"""The Judger table in a real browser (issue #16, points 3, 4, 9): one row per candidate with
its official points folded below it, a candidate the Judger accepted reads "reviewed" (not
"under review" for ever), a nomination waiting for a human has its Approve / Reject buttons,
why an official result failed (the judge's code and the compiler's lines) is shown, each id
links to its lineage node, and every word is in English and Chinese."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from justkernel.events import NewEvent
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import awaiting_candidate, in_lab, sha, write_run

TEAM = "team-001"
DIAGNOSTICS = ["kernel_f16: the compiler ran out of time", "$ g++ -c op_kernel/<kernel>.cpp"]


def _frozen(cand: str, cycles: int) -> NewEvent:
    payload = {"candidate_id": cand, "source_sha256": sha(cand), "cycles_sum": cycles}
    return NewEvent("candidate.frozen", payload, TEAM)


def _review(cand: str) -> NewEvent:
    payload = {"candidate_id": cand, "team": TEAM, "verdict": "accepted", "reviewer": "rules"}
    return NewEvent("judger.review", payload)


def _submitted(cand: str, sub: str) -> NewEvent:
    payload = {"candidate_id": cand, "team": TEAM, "submission_id": sub, "backend": "local"}
    return NewEvent("judger.submission", payload)


def _result(cand: str, sub: str, passed: bool, **extra: object) -> NewEvent:
    outcome = "passed" if passed else "compile_failed"
    points = [
        {"id": f"h{n:02d}", "passed": passed, "time_us": 100.0 + n if passed else None}
        | {"outcome": outcome}
        for n in range(1, 16)
    ]
    payload = {
        "submission_id": sub,
        "candidate_id": cand,
        "source_sha256": sha(cand),
        "status": "official_pass" if passed else "official_fail",
        "points": points,
        "prof_sum_us": sum(p["time_us"] for p in points) if passed else None,
        "sota_changed": passed,
        **extra,
    }
    return NewEvent("official.result", payload, TEAM)


def _events() -> list[NewEvent]:
    """A pass, a compile failure with the judge's words, an accepted candidate not (yet)
    nominated, and a nomination that waits for a human."""
    registered = {"display_name": "Offline-001", "model_preset": "offline", "provider": "offline"}
    nomination = {"candidate_id": "cand-ddd", "team": TEAM, "awaiting_approval": True}
    return [
        NewEvent("team.registered", registered, TEAM),
        _frozen("cand-aaa", 900),
        _review("cand-aaa"),
        _submitted("cand-aaa", "sub-a"),
        _result("cand-aaa", "sub-a", True),
        _frozen("cand-bbb", 800),
        _review("cand-bbb"),
        _submitted("cand-bbb", "sub-b"),
        _result("cand-bbb", "sub-b", False, outcome="compile_failed", diagnostics=DIAGNOSTICS),
        _frozen("cand-ccc", 950),
        _review("cand-ccc"),
        _frozen("cand-ddd", 700),
        _review("cand-ddd"),
        NewEvent("judger.nomination", nomination),
    ]


def test_the_judger_table_has_one_row_per_candidate_and_says_why_a_result_failed(
    page: Page, server: RunningServer, lab_dir
) -> None:
    async def write(lab):  # type: ignore[no-untyped-def]
        run_id = await write_run(lab, "judger grouped", _events())
        await awaiting_candidate(lab, run_id, "cand-ddd", TEAM)
        return run_id

    run_id = in_lab(lab_dir / "data", lab_dir / "config", write)
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
