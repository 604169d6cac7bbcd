"""The first minute (issue #16, 6 and 11) on a fresh lab folder, in real Chromium against the
real `justkernel serve`: the page opens on a start screen (not three empty panels) with an
offline tournament one click away, the demo and the model settings; Chinese text is drawn
with a CJK font (not boxes); the demo plays from its first event when it is opened, is one
run however often Demo is clicked, and starts again after its end."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from justkernel.events.run_archive_check import check_bundle
from justkernel.web.demo import demo_bundle_path
from tests.support.server import RunningServer
from tests.web.conftest import cjk_drawn, screenshot

SIZES = ((1440, 900), (1024, 700))


def _open(
    browser: Browser,
    server: RunningServer,
    signed: dict[str, Any],
    lang: str,
    size: tuple[int, int],
) -> Page:
    context = browser.new_context(
        viewport={"width": size[0], "height": size[1]}, locale="en-US", storage_state=signed
    )
    context.set_default_timeout(30_000)
    context.add_init_script(f"localStorage.setItem('jk.lang', '{lang}')")
    page = context.new_page()
    page.goto(f"{server.base_url}/")
    page.wait_for_selector("body[data-ready=true]")
    return page


def test_a_fresh_lab_opens_on_the_start_screen(
    browser: Browser, fresh_server: RunningServer, fresh_signed_in: dict[str, Any]
) -> None:
    for lang in ("en", "zh"):
        for size in SIZES:
            page = _open(browser, fresh_server, fresh_signed_in, lang, size)
            start = page.locator("#start-screen")
            expect(start).to_be_visible()
            expect(page.locator("#tab-live")).to_be_hidden()
            for button in ("#start-tournament", "#start-demo", "#start-configure"):
                expect(page.locator(button)).to_be_visible()
            if lang == "zh":
                expect(page.locator("#start-tournament")).to_have_text("启动离线锦标赛")
                assert cjk_drawn(page, "#start-screen h2"), "Chinese is drawn as boxes: no CJK font"
            else:
                expect(page.locator("#start-tournament")).to_have_text(
                    "Start an offline tournament"
                )
            # the run picker's hint fits its box
            assert page.evaluate(
                "() => { const s = document.querySelector('#run-select');"
                " return s.scrollWidth <= s.clientWidth + 1; }"
            )
            screenshot(page, f"start-screen-{lang}-{size[0]}")
            page.context.close()

    page = _open(browser, fresh_server, fresh_signed_in, "en", SIZES[0])
    page.click("#start-configure")
    expect(page.locator("#model-form")).to_be_visible()
    expect(page.locator("#start-screen")).to_be_hidden()
    page.context.close()


def test_one_click_starts_an_offline_tournament(
    browser: Browser, fresh_server: RunningServer, fresh_signed_in: dict[str, Any]
) -> None:
    page = _open(browser, fresh_server, fresh_signed_in, "en", SIZES[0])
    page.click("#start-tournament")
    expect(page.locator("#start-screen")).to_be_hidden(timeout=90_000)  # the lab starts a run
    expect(page.locator("#tab-live")).to_be_visible()
    run_id = page.locator("#run-select").input_value()
    assert run_id
    run = page.evaluate(f"() => fetch('/api/runs/{run_id}').then(r => r.json())")
    assert run["meta"]["task"]["mode"] == "multi"
    assert [t["model"] for t in run["meta"]["task"]["teams"]] == ["offline"] * 3
    expect(page.locator("#team-select option")).not_to_have_count(0)
    # in Chinese, the Configuration page's team list shows each team's status translated
    page.click("#lang-btn")
    page.click("[data-tab=config]")
    teams = page.locator("#run-teams li[data-team]")
    expect(teams.first).to_be_visible()
    for text in teams.all_inner_texts():
        assert re.search(r"空闲|运行中|已暂停|已完成|已退出|排队中", text), text
        assert not re.search(r"\b(idle|running|paused|exited|queued)\b", text), text
    page.evaluate(f"() => fetch('/api/runs/{run_id}/pause', {{method: 'POST'}})")
    page.context.close()


def test_the_demo_plays_when_opened_loops_and_is_one_run(
    browser: Browser, fresh_server: RunningServer, fresh_signed_in: dict[str, Any]
) -> None:
    page = _open(browser, fresh_server, fresh_signed_in, "en", SIZES[0])
    page.click("#demo-btn")  # the tournament's run is open: the header's Demo button
    expect(page.locator("#replay-bar")).to_be_visible()
    # it plays from the beginning, now that the page opened it
    expect(page.locator("#replay-play")).to_have_attribute("data-playing", "true")
    page.wait_for_selector("#log-list > li.ev.arrive", timeout=60_000)
    run_id = page.locator("#run-select").input_value()
    position = page.locator("#replay-pos")
    expect(position).to_have_text(re.compile(r"^event \d+ of \d+$"))

    # header and scrubber: one number
    page.click("#replay-play")  # pause
    at = int(re.findall(r"\d+", position.inner_text())[0])
    expect(page.locator("#run-badges .events-count")).to_have_text(f"{at} events")

    # a second Demo click opens the same run, from its beginning again
    page.click("#demo-btn")
    expect(page.locator("#run-select")).to_have_value(run_id)
    expect(page.locator("#replay-play")).to_have_attribute("data-playing", "true")
    runs = page.evaluate("() => fetch('/api/runs').then(r => r.json())")["runs"]
    assert [r["id"] for r in runs if r["mode"] == "demo"] == [run_id]

    # near the end it plays on, stops, and starts again from the first event
    page.evaluate(
        "() => { const r = document.querySelector('#replay-range');"
        " r.value = String(Number(r.max) - 2); r.dispatchEvent(new Event('change')); }"
    )
    if page.locator("#replay-play").get_attribute("data-playing") != "true":
        page.click("#replay-play")
    page.wait_for_function(  # the end, shown for a moment
        "() => { const r = document.querySelector('#replay-range');"
        " return Number(r.value) === Number(r.max); }",
        timeout=30_000,
        polling=100,
    )
    page.wait_for_function(
        "() => Number(document.querySelector('#replay-range').value) < 50", timeout=30_000
    )
    expect(page.locator("#replay-play")).to_have_attribute("data-playing", "true")
    page.context.close()

    for lang in ("en", "zh"):
        for size in SIZES:
            page = _open(browser, fresh_server, fresh_signed_in, lang, size)
            page.evaluate(f"() => {{ location.hash = 'run={run_id}'; }}")
            expect(page.locator("#replay-bar")).to_be_visible()
            page.wait_for_selector("#log-list > li.ev", timeout=60_000)
            page.wait_for_timeout(1500)  # a few arrivals, for the picture only
            screenshot(page, f"demo-{lang}-{size[0]}")
            page.context.close()


def test_an_imported_run_keeps_its_name_and_the_log_footer_stays_on_screen(
    browser: Browser, fresh_server: RunningServer, fresh_signed_in: dict[str, Any]
) -> None:
    """Issue #16, 13: the run is named as in its bundle (not after the file), and with the
    replay bar and the import notice showing the work log's footer is still in the window."""
    bundle = check_bundle(demo_bundle_path(), 64 * 1024 * 1024)
    for size in SIZES:
        page = _open(browser, fresh_server, fresh_signed_in, "en", size)
        page.set_input_files("#import-file", str(demo_bundle_path()))
        expect(page.locator("#notice")).to_contain_text("Imported as", timeout=60_000)
        expect(page.locator("#replay-bar")).to_be_visible()
        replay_id = page.evaluate("() => decodeURIComponent(location.hash.split('run=')[1])")
        run = page.evaluate(f"() => fetch('/api/runs/{replay_id}').then(r => r.json())")
        assert run["name"] == bundle.manifest.run.name != "session.jkbundle"
        foot = page.locator("#log-panel .log-foot").bounding_box()
        assert foot is not None and foot["y"] + foot["height"] <= size[1], (foot, size)
        page.context.close()
