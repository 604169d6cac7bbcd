"""The screenshot set (issue #16, "Must show"): every main view of the dashboard, in English and
Chinese, at 1440x900 and 1024x700, on the real `justkernel serve` in Debian's Chromium, saved
as artifacts/screenshots/set/<view>-<lang>-<width>.png. Each view's state is built once; the
language is switched with the page's own button and the size on the same page. Before each
picture the test checks that the view shows real content, and in Chinese that the page's font
draws Chinese glyphs (not boxes). With UPDATE_SCREENSHOTS=1 the pictures the README shows
(`README_SHOTS`) are copied to docs/screenshots/, their one writer."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import (
    ARTIFACTS,
    ROOT,
    cjk_drawn,
    fill_bad_model_form,
    open_dashboard,
)
from tests.web.pipeline_support import TEAM as PIPELINE_TEAM
from tests.web.pipeline_support import real_receipt, write_pipeline_run
from tests.web.synthetic import DIAGNOSTICS, in_lab, write_judger_table_run

SET = ARTIFACTS / "set"
DOC_SHOTS = ROOT / "docs" / "screenshots"
README = ROOT / "README.md"
LANGS = ("en", "zh-CN")  # as the page names them (<html lang>)
SIZES = ((1440, 900), (1024, 700))
VIEWS = (
    "start",
    "live",
    "lineage",
    "work-log",
    "judger-table",
    "pipeline",
    "demo",
    "replay",
    "config-errors",
)
# the pictures the README shows, copied to docs/screenshots/ under the same name
README_SHOTS = (*(f"{view}-en-1440" for view in VIEWS), "live-zh-CN-1440")
ROWS = "#log-list > li.ev"

Check = Callable[[Page, str], None]


def _set_lang(page: Page, lang: str) -> None:
    if page.evaluate("document.documentElement.lang") != lang:
        page.click("#lang-btn")
    expect(page.locator("html")).to_have_attribute("lang", lang)


def _shoot(
    page: Page,
    view: str,
    shows: Check,
    chinese: str,
    arrange: Check | None = None,
    **options: Any,
) -> None:
    """Each language and size of one view. `arrange` redoes what a language switch redraws
    away (an open fold, a refused form), once the page speaks `lang`; `shows` checks the view
    holds its content, in that language; `chinese` is an element whose Chinese text must be
    drawn as glyphs."""
    SET.mkdir(parents=True, exist_ok=True)
    for lang in LANGS:
        _set_lang(page, lang)
        if arrange:
            arrange(page, lang)
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            shows(page, lang)
            if lang != "en":
                assert cjk_drawn(page, chinese), f"{view}: Chinese is drawn as boxes"
            name = f"{view}-{lang}-{width}"
            path = SET / f"{name}.png"
            page.screenshot(path=str(path), **options)
            if os.environ.get("UPDATE_SCREENSHOTS") == "1" and name in README_SHOTS:
                DOC_SHOTS.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, DOC_SHOTS / path.name)


def _zh(lang: str) -> bool:
    return lang == "zh-CN"


def _header_fits(page: Page) -> None:
    """The header never runs off the page (a long run name is cut, its full name the
    tooltip). One row at 1440 px would squeeze the picker to about 100 px beside a live run's
    badges, so the actions may take a second row."""
    spill = page.eval_on_selector(".topbar", "e => e.scrollWidth - e.clientWidth")
    assert spill <= 0, f"the header runs {spill} px off the page"


def _capitalised_headers(page: Page, selector: str, lang: str) -> None:
    """English column headers start with a capital; Chinese ones stay Chinese."""
    heads = [x.strip() for x in page.locator(f"{selector} th").all_inner_texts() if x.strip()]
    assert heads, f"{selector}: no column header"
    if _zh(lang):
        assert not [x for x in heads if x.isascii()], heads
    else:
        assert [x for x in heads if not x[0].isupper()] == [], heads


def _earlier_clear_of_rows(page: Page) -> None:
    """The "Earlier records" button, when shown, sits above the list: it covers no row."""
    button = page.locator("#log-earlier")
    if not button.is_visible():
        return
    bottom = button.evaluate("b => b.getBoundingClientRect().bottom")
    top = page.locator("#log-list").evaluate("l => l.getBoundingClientRect().top")
    assert bottom <= top + 0.5, f"Earlier records overlaps the log ({bottom} > {top})"


def _unfold(page: Page, selector: str) -> None:
    """Open the fold of each row at `selector` that is still closed."""
    for row in page.locator(selector).all():
        if not row.locator("details").first.evaluate("d => d.open"):
            row.locator("summary").first.click()


def test_start_screen(browser: Browser, fresh_server: RunningServer, fresh_signed_in: Any) -> None:
    context = browser.new_context(locale="en-US", storage_state=fresh_signed_in)
    try:
        page = context.new_page()
        open_dashboard(page, fresh_server.base_url)

        def shows(page: Page, lang: str) -> None:
            expect(page.locator("#start-screen")).to_be_visible()
            for button in ("#start-tournament", "#start-demo", "#start-configure"):
                expect(page.locator(button)).to_be_visible()
            words = "启动离线锦标赛" if _zh(lang) else "Start an offline tournament"
            expect(page.locator("#start-tournament")).to_have_text(words)

        _shoot(page, "start", shows, "#start-screen h2")
    finally:
        context.close()


def test_live(page: Page, server: RunningServer, offline_run: str) -> None:
    open_dashboard(page, server.base_url, offline_run)

    def shows(page: Page, lang: str) -> None:
        expect(page.locator(ROWS).first).to_be_visible()
        assert page.locator(ROWS).count() >= 10
        expect(page.locator("#graph g.node[data-team='team-001']")).to_be_visible()
        expect(page.locator("#todo-list li.todo").first).to_be_visible(timeout=60_000)
        expect(page.locator("#log-panel h2")).to_have_text("工作日志" if _zh(lang) else "Work log")
        _header_fits(page)
        _earlier_clear_of_rows(page)
        # a long run name is cut on screen: its option and the picker carry it in full
        label = page.locator("#run-select option:checked").inner_text()
        expect(page.locator("#run-select option:checked")).to_have_attribute(
            "title", re.compile("^" + re.escape(label) + r" \(")
        )
        expect(page.locator("#run-select")).to_have_attribute("title", re.compile(re.escape(label)))

    _shoot(page, "live", shows, "#log-panel h2", animations="disabled")


def test_lineage(page: Page, server: RunningServer, lineage_run: dict[str, str]) -> None:
    ids = lineage_run
    page.goto(f"{server.base_url}/#run={ids['run']}&lineage={ids['d']}")
    page.wait_for_selector("body[data-ready=true]")

    def shows(page: Page, lang: str) -> None:
        expect(page.locator("#lineage g.lin-node")).to_have_count(4)
        detail = page.locator(f'#lineage-detail .lin-detail-body[data-candidate="{ids["d"]}"]')
        expect(detail).to_be_visible()
        words = "采纳自其他队伍" if _zh(lang) else "adopted from another team"
        expect(detail).to_contain_text(words)
        expect(detail.locator(".lin-line.add").first).to_be_visible()

    _shoot(page, "lineage", shows, "#lineage-detail")


def test_work_log_steps(page: Page, server: RunningServer, steps_run: str) -> None:
    open_dashboard(page, server.base_url, steps_run)
    steps = f"{ROWS}.step"

    head = page.locator(f"{steps}[data-tool='read_file'] .ev-head")

    def arrange(page: Page, lang: str) -> None:
        expect(head).to_contain_text("工具步骤" if _zh(lang) else "tool step")  # redrawn
        expect(page.locator(steps)).to_have_count(2)
        _unfold(page, steps)

    def shows(page: Page, lang: str) -> None:
        expect(page.locator(steps)).to_have_count(2)
        expect(head).to_contain_text("工具步骤" if _zh(lang) else "tool step")
        expect(page.locator(f"{steps} .step-part.return").first).to_be_visible()
        expect(page.locator(f"{ROWS}[data-seq='1']")).to_be_attached()
        expect(page.locator("#log-earlier")).to_be_hidden()  # nothing is earlier than #1

    _shoot(page, "work-log", shows, f"{steps}[data-tool='read_file'] .ev-head", arrange)


def test_judger_table(page: Page, server: RunningServer, lab_dir: Path) -> None:
    run_id = in_lab(lab_dir / "data", lab_dir / "config", write_judger_table_run)
    open_dashboard(page, server.base_url, run_id)
    page.click("[data-tab=results]")
    rows = page.locator("#judger-table tr.cand")

    failure = page.locator("#judger-table tr.cand[data-candidate='cand-bbb'] td.failure")

    reviewed = page.locator("#judger-table tr.cand[data-candidate='cand-ccc'] td").nth(3)

    def arrange(page: Page, lang: str) -> None:
        expect(reviewed).to_have_text("已评审" if _zh(lang) else "reviewed")  # redrawn
        expect(rows).to_have_count(4)
        _unfold(page, "#judger-table td.failure")  # why the official result failed
        expect(failure.locator("pre")).to_have_text("\n".join(DIAGNOSTICS))
        page.evaluate("() => window.scrollTo(0, 0)")

    def shows(page: Page, lang: str) -> None:
        expect(rows).to_have_count(4)
        expect(reviewed).to_have_text("已评审" if _zh(lang) else "reviewed")
        waiting = page.locator("#judger-table tr.cand[data-candidate='cand-ddd']")
        expect(waiting.locator("button.approve")).to_be_in_viewport()
        expect(failure.locator(".outcome")).to_have_text(
            "编译失败" if _zh(lang) else "compile failed"
        )
        _capitalised_headers(page, "#judger-table table.judger > thead", lang)
        _capitalised_headers(page, "#leaderboard", lang)
        usage = page.locator("#usage")
        expect(usage.locator("table.usage.providers")).to_have_count(0)  # no provider row
        if usage.locator("table").count():
            _capitalised_headers(page, "#usage", lang)
        else:
            expect(usage).to_have_text("还没有模型调用。" if _zh(lang) else "No model calls yet.")

    _shoot(page, "judger-table", shows, "#judger-table", arrange)


def test_pipeline_view(page: Page, server: RunningServer, lab_dir: Path) -> None:
    run_id, _sha = write_pipeline_run(lab_dir, real_receipt(), name="pipeline shots")
    open_dashboard(page, server.base_url, run_id)
    page.select_option("#team-select", PIPELINE_TEAM)
    page.locator(f"{ROWS}.kind-experiment-receipt .pipeline-open").last.click()
    view = page.locator("#pipeline-view")

    def shows(page: Page, lang: str) -> None:
        expect(view).to_be_visible()
        bound = view.locator(".pipeline-bound")
        expect(bound).to_contain_text("瓶颈流水线" if _zh(lang) else "Bound pipe")
        chart = view.locator("canvas.pipeline-chart")
        expect(chart).to_have_attribute("data-lanes", "MTE2,V,MTE3,S")
        assert int(chart.get_attribute("data-segments") or "0") > 0
        cores = (chart.get_attribute("data-cores") or "").split(",")
        assert cores and all(c.startswith("核 " if _zh(lang) else "core ") for c in cores), cores

    _shoot(page, "pipeline", shows, "#pipeline-view .pipeline-bound", animations="disabled")


def _jump(page: Page, share: float) -> int:
    """Pause the replay and jump to `share` of its events; the event jumped to."""
    expect(page.locator("#replay-bar")).to_be_visible()
    if page.locator("#replay-play").get_attribute("data-playing") == "true":
        page.click("#replay-play")
    expect(page.locator("#replay-play")).to_have_attribute("data-playing", "false")
    return page.evaluate(
        "(share) => { const r = document.querySelector('#replay-range');"
        " r.value = String(Math.round(Number(r.max) * share));"
        " r.dispatchEvent(new Event('change')); return Number(r.value); }",
        share,
    )


def test_demo(page: Page, server: RunningServer, api: httpx.Client) -> None:
    answer = api.post("/api/demo/start")
    assert answer.status_code == 200, answer.text
    open_dashboard(page, server.base_url, answer.json()["run"]["id"])
    page.select_option("#team-select", "")  # all teams: the A2A edges between them
    at = _jump(page, 0.6)
    expect(page.locator(ROWS).last).to_have_attribute("data-seq", str(at))

    def shows(page: Page, lang: str) -> None:
        banner = page.locator("#sim-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("模拟" if _zh(lang) else "Simulated data")
        expect(page.locator("#graph g.node").nth(2)).to_be_visible()  # three teams at least
        expect(page.locator("#graph path.edge").first).to_be_attached()
        assert page.locator(ROWS).count() >= 10
        bodies = page.locator(f"{ROWS} .ev-body").all_inner_texts()
        assert not [x for x in bodies if re.match(r"^st_\w+$", x)], bodies  # a missing word
        _header_fits(page)
        # the Judger's feedback in the page's words: its code translated, no raw status
        feedback = page.locator(f"{ROWS}[data-kind='a2a.message']").all_inner_texts()
        assert feedback, "the demo shows no board message at 60 %"
        assert not [x for x in feedback if "official_" in x], feedback
        if _zh(lang):
            assert not [x for x in feedback if "your candidate" in x], feedback
        judger = page.locator("#graph .node-labels text[data-team='judger']")
        expect(judger).to_have_text("评审" if _zh(lang) else "Judger")
        # labels are drawn last (above every edge and count), on a halo of the panel's colour
        last = page.eval_on_selector(
            "#graph svg.graph-svg", "s => s.lastElementChild.classList + ''"
        )
        assert last == "node-labels", last
        halo = judger.evaluate(
            "t => { const c = getComputedStyle(t); return `${c.paintOrder} ${c.strokeWidth}`; }"
        )
        assert halo.startswith("stroke") and not halo.endswith(" 0px"), halo
        expect(page.locator("#log-earlier")).to_be_visible()  # 160 of ~800 events shown
        _earlier_clear_of_rows(page)

    _shoot(page, "demo", shows, "#sim-banner", animations="disabled")


def test_replay(page: Page, server: RunningServer, api: httpx.Client, offline_run: str) -> None:
    exported = api.get(f"/api/runs/{offline_run}/export")
    assert exported.status_code == 200, exported.text
    imported = api.post(
        "/api/import?name=shots.jkbundle",
        content=exported.content,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert imported.status_code == 200, imported.text
    open_dashboard(page, server.base_url, imported.json()["run"]["id"])
    at = _jump(page, 0.5)

    def shows(page: Page, lang: str) -> None:
        expect(page.locator("#run-badges .chip.mode-replay")).to_be_visible()
        position = page.locator("#replay-pos")
        expect(position).to_contain_text(str(at))
        if not _zh(lang):
            expect(position).to_have_text(re.compile(rf"^event {at} of \d+$"))
        expect(page.locator(ROWS).last).to_have_attribute("data-seq", str(at))

    _shoot(page, "replay", shows, "#replay-bar", animations="disabled")


def test_config_errors(page: Page, server: RunningServer, offline_run: str) -> None:
    open_dashboard(page, server.base_url, offline_run)
    form = page.locator("#model-form")
    limit = form.locator(".error[data-error-for='max_output_tokens']")

    def arrange(page: Page, lang: str) -> None:
        # the language switch redraws the forms a moment later: start from a page loaded in it
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        fill_bad_model_form(page)
        expect(limit).not_to_be_empty()

    def shows(page: Page, lang: str) -> None:
        expect(limit).to_have_text("最大为 1,000,000。" if _zh(lang) else "At most 1,000,000.")
        name = form.locator(".error[data-error-for='name']")
        expect(name).to_contain_text("字母" if _zh(lang) else "letters, digits")
        base_url = "接口地址（Base URL）" if _zh(lang) else "Base URL"
        expect(form.locator("label", has_text=base_url)).to_have_count(1)
        models = page.locator("table.models")
        heads = models.locator("th").all_inner_texts()
        assert base_url in heads and ("来源" if _zh(lang) else "Source") in heads, heads
        sources = models.locator("td.source").all_inner_texts()
        assert sources, "the models table shows no source"
        if _zh(lang):  # "public", "local": the server's codes, in the page's words
            assert not [x for x in sources if x.isascii()], sources
        form.locator("[name=name]").scroll_into_view_if_needed()

    _shoot(page, "config-errors", shows, "#model-form", arrange)


def test_the_readme_shows_the_sets_readme_shots_and_nothing_else() -> None:
    """README.md's image links, the files in docs/screenshots/ and `README_SHOTS` agree: no
    dangling link, no orphan file, every README shot a picture of the set."""
    linked = re.findall(r"!\[[^\]]*\]\(docs/screenshots/([^)]+)\)", README.read_text())
    files = sorted(p.name for p in DOC_SHOTS.iterdir())
    wanted = sorted(f"{name}.png" for name in README_SHOTS)
    assert sorted(linked) == wanted, "README.md's screenshots differ from README_SHOTS"
    assert len(set(linked)) == len(linked), "a screenshot is shown twice"
    assert files == wanted, "docs/screenshots/ holds other files than README_SHOTS"
    names = {f"{view}-{lang}-{width}" for view in VIEWS for lang in LANGS for width, _ in SIZES}
    assert set(README_SHOTS) <= names
