"""Charts, the A2A graph and the layout in a real browser (issue #16, points 9 and 10): the
live view keeps its three columns from 1440 down to 1024 px and nothing is wider than its
panel unless inside a scroll container; y ticks are distinct (a flat series has one tick);
throughput has a time axis and a legend; the graph has arrowheads, counts, swatches and
adoption edges, fills its panel, and with motion off no dot sits at the SVG origin.
Screenshots of live and results at 1440x900 and 1024x700 in English and Chinese."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.events import NewEvent
from justkernel.lab import Lab
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import in_lab, judger_events, sha, write_run

SIZES = [(1440, 900), (1024, 700)]
LONG = "x" * 400  # one unbreakable word, as tool output often has

# Elements that stick out of their panel without a scroll container between them and it.
OVERFLOW_JS = """() => {
  const out = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) {
    out.push(`page ${doc.scrollWidth} > ${doc.clientWidth}`);
  }
  const scrolls = (el) => /(auto|scroll|hidden)/.test(getComputedStyle(el).overflowX);
  for (const panel of document.querySelectorAll('.panel')) {
    if (!panel.offsetParent) continue;
    const pr = panel.getBoundingClientRect();
    if (pr.right > doc.clientWidth + 1) out.push(`panel ${panel.id} ends at ${pr.right}`);
    if (panel.scrollWidth > panel.clientWidth + 1) out.push(`panel ${panel.id} scrolls sideways`);
    for (const el of panel.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (!r.width || (r.right <= pr.right + 1 && r.left >= pr.left - 1)) continue;
      let p = el.parentElement, inside = false;
      for (; p && p !== panel; p = p.parentElement) if (scrolls(p)) { inside = true; break; }
      const what = `${panel.id || 'panel'} > ${el.tagName}.${el.getAttribute('class')}`;
      if (!inside) out.push(`${what}: ${r.left}-${r.right} vs ${pr.left}-${pr.right}`);
    }
  }
  return out.slice(0, 12);
}"""


def _receipt(team: str, n: int, cycles: int, slot: int, blob: str, status: str) -> NewEvent:
    return NewEvent(
        "experiment.receipt",
        {
            "experiment": n,
            "receipt": {
                "receipt_id": sha(f"rc{team}{n}"),
                "mode": "full",
                "status": status,
                "cache_hit": False,
                "total_est_cycles": cycles if status == "measured" else None,
            },
            "executor": {"host": "vm", "worker": "local", "slot": slot},
            "blobs": [blob],
        },
        team,
    )


async def _write_charts_run(lab: Lab) -> str:
    """Three teams talking, one adopting another's candidate, timed receipts, a long log."""
    teams = ("team-001", "team-002", "team-003")
    events = [
        NewEvent("team.registered", {"display_name": f"Qwen-{t[-3:]}", "model_preset": "qwen"}, t)
        for t in teams
    ]
    for k in range(6):
        start, end = f"2026-01-01T00:{k:02d}:05+00:00", f"2026-01-01T00:{k:02d}:50+00:00"
        body = {
            "submitted_at": f"2026-01-01T00:{k:02d}:00+00:00",
            "started_at": start,
            "finished_at": end,
            "durations": {"compile": 5.0, "simulate": 30.0 if k % 2 else None, "total": 45.0},
        }
        blob = lab.blobs.put(json.dumps(body).encode())
        team = teams[k % 3]
        status = "measured" if k % 2 else "compile_failed"
        events.append(_receipt(team, k, 1_850_000_000 - k * 10_000_000, k % 2, blob, status))
    events += [
        NewEvent(
            "a2a.message",
            {"message_id": f"m{i}", "to": b, "recipients": [b], "type": kind, "summary": "hi"},
            a,
        )
        for i, (a, b, kind) in enumerate(
            [
                ("team-001", "team-002", "message"),
                ("team-002", "team-001", "message"),
                ("team-002", "team-001", "message"),
                ("team-003", "team-001", "experience"),
            ]
        )
    ]
    events += [
        NewEvent("candidate.frozen", {"candidate_id": "cand-c1", "cycles_sum": 9}, "team-001"),
        NewEvent(
            "tool.call",
            {"id": "f1", "name": "fetch_candidate_source", "args": '{"candidate_id": "cand-c1"}'},
            "team-002",
        ),
    ]
    for i in range(40):
        team = teams[i % 3]
        events += [
            NewEvent("tool.call", {"id": f"c{i}", "name": "read_file", "args": LONG}, team),
            NewEvent("tool.result", {"id": f"c{i}", "name": "read_file", "content": LONG}, team),
        ]
    return await write_run(lab, "charts and layout", events)


async def _write_flat_run(lab: Lab) -> str:
    """One team whose best never moved: a flat series."""
    events = [
        NewEvent("team.registered", {"display_name": "Flat", "model_preset": "qwen"}, "team-001"),
    ]
    events += [e for e in judger_events("cand-f", "cand-g") if e.kind == "experiment.receipt"][:1]
    return await write_run(lab, "flat series", events)


async def _write_results_run(lab: Lab) -> str:
    """The Judger's run, its best receipts on the Ascend C target (a pipeline button in the
    leaderboard's receipt column) and a long team name, as a real run has them."""
    events = judger_events("cand-l1", "cand-l2")
    for event in events:
        if event.kind == "experiment.receipt":
            event.payload["executor"]["toolchain_id"] = DEFAULT_TOOLCHAIN
            event.payload["blobs"] = [
                lab.blobs.put(json.dumps({"n": event.payload["commit"]}).encode())
            ]
        if event.kind == "team.registered" and event.team == "team-002":
            event.payload["display_name"] = "Qwen3-Coder-480B-A35B-Instruct (tiling team)"
    return await write_run(lab, "results layout", events)


@pytest.fixture(scope="module")
def runs(server: RunningServer, lab_dir) -> dict[str, str]:  # type: ignore[no-untyped-def]
    data, config = lab_dir / "data", lab_dir / "config"
    return {
        "charts": in_lab(data, config, _write_charts_run),
        "flat": in_lab(data, config, _write_flat_run),
        "judger": in_lab(data, config, _write_results_run),
    }


def _open(
    browser: Browser, signed_in: dict[str, Any], size: tuple[int, int], lang: str = "en"
) -> Page:
    context = browser.new_context(
        viewport={"width": size[0], "height": size[1]}, locale="en-US", storage_state=signed_in
    )
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.add_init_script(f"localStorage.setItem('jk.lang', '{lang}')")
    return page


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_live_view_keeps_its_columns_and_nothing_sticks_out(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, runs: dict[str, str], size
) -> None:  # type: ignore[no-untyped-def]
    for lang in ("en", "zh"):
        page = _open(browser, signed_in, size, lang)
        open_dashboard(page, server.base_url, runs["charts"])
        page.select_option("#team-select", "team-001")
        expect(page.locator("#log-list > li.ev").first).to_be_visible()
        expect(page.locator("#graph path.edge").first).to_be_attached()
        boxes = [
            page.locator(f"#{p}").bounding_box() for p in ("plan-panel", "graph-panel", "log-panel")
        ]
        assert all(b is not None for b in boxes)
        tops = {round(b["y"]) for b in boxes}  # type: ignore[index]
        assert len(tops) == 1, f"the live panels are not side by side: {boxes}"
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]  # type: ignore[index]
        assert all(b["height"] <= size[1] for b in boxes), boxes  # type: ignore[index]
        assert page.evaluate(OVERFLOW_JS) == []
        screenshot(page, f"charts-live-{lang}-{size[0]}x{size[1]}")
        page.context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_results_tables_scroll_within_their_panels(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, runs: dict[str, str], size
) -> None:  # type: ignore[no-untyped-def]
    for lang in ("en", "zh"):
        page = _open(browser, signed_in, size, lang)
        open_dashboard(page, server.base_url, runs["judger"])
        page.click("[data-tab=results]")
        expect(page.locator("#leaderboard tr[data-team='team-001']")).to_be_visible()
        expect(page.locator("#leaderboard button.pipeline-open").first).to_be_visible()
        expect(page.locator("#usage table").first).to_be_visible()
        expect(page.locator("#throughput svg")).to_be_visible()
        assert page.evaluate(OVERFLOW_JS) == []
        if size[0] >= 1440:  # at 1440 px the leaderboard fits its half, receipt column included
            sizes = page.evaluate(
                "() => { const b = document.querySelector('#leaderboard');"
                " return [b.scrollWidth, b.clientWidth]; }"
            )
            assert sizes[0] <= sizes[1], f"the leaderboard is cut at 1440 px: {sizes}"
        # the leaderboard's last column (the receipt) is reachable: inside the panel or scrolled
        receipt = page.locator("#leaderboard tr[data-team='team-001'] td").last
        receipt.scroll_into_view_if_needed()
        box, panel = receipt.bounding_box(), page.locator("#leaderboard").bounding_box()
        assert box and panel and box["x"] + box["width"] <= panel["x"] + panel["width"] + 1
        page.evaluate("() => window.scrollTo(0, 0)")
        screenshot(page, f"charts-results-{lang}-{size[0]}x{size[1]}", full_page=True)
        page.context.close()


def test_graph_has_direction_counts_swatches_and_adoption(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, runs: dict[str, str]
) -> None:
    page = _open(browser, signed_in, (1440, 900))
    open_dashboard(page, server.base_url, runs["charts"])
    edges = page.locator("#graph path.edge")
    expect(edges.first).to_be_attached()
    ends = edges.evaluate_all("els => els.map(e => e.getAttribute('marker-end'))")
    assert ends and all(e and e.startswith("url(#jk-arrow-") for e in ends), ends
    markers = page.evaluate("() => [...document.querySelectorAll('#graph marker')].map(m => m.id)")
    assert {m.removeprefix("jk-arrow-") for m in markers} >= {"message", "adoption"}
    # team-002 → team-001 was sent twice: the edge says 2, in its direction
    back = page.locator(
        "#graph text.edge-count[data-source='team-002'][data-target='team-001']"
        "[data-type='message']"
    )
    expect(back).to_have_text("2")
    adoption = page.locator("#graph path.edge-adoption")
    expect(adoption).to_have_count(1)
    assert adoption.get_attribute("data-source") == "team-001"
    assert adoption.get_attribute("data-target") == "team-002"
    dash = adoption.evaluate("e => getComputedStyle(e).strokeDasharray")
    assert dash not in ("", "none"), "adoption edges are drawn distinctly (dashed)"
    swatches = page.locator("#graph .graph-legend .legend-item[data-type] .swatch")
    assert swatches.count() >= 3
    colors = swatches.evaluate_all(
        "els => els.map(e => { const c = getComputedStyle(e);"
        " return c.backgroundColor + c.borderTopColor + c.borderTopStyle; })"
    )
    assert len(set(colors)) == len(colors)  # one look per kind
    # the graph uses its panel: the drawing covers most of the panel's height
    svg, panel = (
        page.locator("#graph svg").bounding_box(),
        page.locator("#graph-panel").bounding_box(),
    )
    assert svg and panel and svg["height"] >= 0.7 * panel["height"], (svg, panel)
    page.context.close()


def test_with_motion_off_no_dot_sits_at_the_svg_origin(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, runs: dict[str, str]
) -> None:
    page = _open(browser, signed_in, (1440, 900))
    page.add_init_script("localStorage.setItem('jk.motion', 'off')")
    open_dashboard(page, server.base_url, runs["charts"])
    expect(page.locator("#graph circle.dot").first).to_be_attached()
    assert page.evaluate("document.body.classList.contains('motion-off')")
    stray = page.evaluate(
        """() => {
          const svg = document.querySelector('#graph svg').getBoundingClientRect();
          return [...document.querySelectorAll('#graph circle.dot')].map(c => {
            const r = c.getBoundingClientRect();
            return [r.x + r.width / 2 - svg.x, r.y + r.height / 2 - svg.y];
          }).filter(([x, y]) => Math.hypot(x, y) < 12);
        }"""
    )
    assert stray == []
    page.context.close()


def test_y_ticks_are_distinct_and_throughput_has_a_time_axis_and_legend(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, runs: dict[str, str]
) -> None:
    page = _open(browser, signed_in, (1440, 900))
    open_dashboard(page, server.base_url, runs["flat"])
    page.click("[data-tab=results]")
    expect(page.locator("#cycles-plot polyline")).to_have_count(1)
    flat = page.locator("#cycles-plot text.y-tick").all_text_contents()
    assert flat == ["1.8G"], flat  # a flat series: one tick
    page.goto(f"{server.base_url}/#run={runs['judger']}")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.click("[data-tab=results]")
    expect(page.locator("#cycles-plot polyline")).to_have_count(2)
    ticks = page.locator("#cycles-plot text.y-tick").all_text_contents()
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), ticks

    page.goto(f"{server.base_url}/#run={runs['charts']}")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.click("[data-tab=results]")
    expect(page.locator("#throughput rect.job")).to_have_count(6)
    times = page.locator("#throughput text.x-tick").all_text_contents()
    assert len(times) >= 3 and len(set(times)) == len(times) and times[0] == "0 s", times
    legend = page.locator("#throughput .throughput-legend .legend-item[data-status]")
    statuses = legend.evaluate_all("els => els.map(e => e.dataset.status)")
    assert sorted(statuses) == ["compile_failed", "measured"], statuses
    assert all(text.strip() for text in legend.all_inner_texts())
    expect(page.locator("#throughput .throughput-legend .queue-swatch")).to_be_visible()
    means = page.locator("#throughput table.stage-means td").all_inner_texts()
    heads = page.locator("#throughput table.stage-means th").all_inner_texts()
    by_stage = dict(zip(heads, means, strict=True))
    assert by_stage["simulate"] == "15 s" and by_stage["total"] == "45 s", by_stage
    page.context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_html_report_tables_scroll_within_the_page(
    browser: Browser,
    signed_in: dict[str, Any],
    server: RunningServer,
    api: httpx.Client,
    runs: dict[str, str],
    size: tuple[int, int],
) -> None:
    answer = api.get(f"/api/runs/{runs['judger']}/report.html")
    assert answer.status_code == 200, answer.text
    page = _open(browser, signed_in, size)
    page.set_content(answer.text)
    assert page.locator("table").count() >= 3
    wide = page.evaluate(
        """() => {
          const doc = document.documentElement, out = [];
          if (doc.scrollWidth > doc.clientWidth + 1) out.push(`page ${doc.scrollWidth}`);
          for (const tb of document.querySelectorAll('table, svg, pre')) {
            const r = tb.getBoundingClientRect();
            if (r.right > doc.clientWidth + 1) out.push(`${tb.tagName} ends at ${r.right}`);
          }
          return out;
        }"""
    )
    assert wide == []
    page.context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_configuration_panels_keep_their_columns_inside(
    browser: Browser, signed_in: dict[str, Any], server: RunningServer, size: tuple[int, int]
) -> None:
    page = _open(browser, signed_in, size)
    open_dashboard(page, server.base_url)
    page.click("[data-tab=config]")
    expect(page.locator("#task-form")).to_be_visible()
    expect(page.locator("#models .test-result, #models button").first).to_be_attached()
    task, judger = (
        page.locator("#task-panel").bounding_box(),
        page.locator("#run-teams-panel").bounding_box(),
    )
    assert task and judger and task["x"] < judger["x"], "task and run teams side by side"
    assert page.evaluate(OVERFLOW_JS) == []
    screenshot(page, f"charts-config-{size[0]}x{size[1]}", full_page=True)
    page.context.close()
