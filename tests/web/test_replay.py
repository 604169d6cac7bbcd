"""Export and replay in a real browser: the offline run is exported with the dashboard's button,
imported back through the dashboard, and the replay plays exactly the same events in the same
order; a jump redraws the view as of that event without animation."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot

RECORD_ARRIVALS = """() => {
  window.__seen = [];
  new MutationObserver((changes) => {
    // a row read here shows its state now: one added and then moved again in the same batch
    // (its tool's return joined it) counts once, at its last place
    const added = [];
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node.dataset && node.dataset.seq) added.push(node);
      }
    }
    added.forEach((node, i) => {
      if (added.lastIndexOf(node) !== i) return;
      const seqs = (node.dataset.events || node.dataset.seq).split(' ').map(Number);
      window.__seen.push([seqs, node.dataset.kind]);  // a tool step holds its request and return
    });
  }).observe(document.querySelector('#log-list'), { childList: true });
}"""


def _events(api: httpx.Client, run_id: str, upto: int) -> list[list[Any]]:
    out: list[list[Any]] = []
    while len(out) < upto:
        batch = api.get(
            f"/api/runs/{run_id}/events", params={"after": len(out), "limit": 1000}
        ).json()["events"]
        assert batch, "the source run lost events"
        out += [[e["seq"], e["kind"]] for e in batch]
    return out[:upto]


def test_exported_run_imported_back_replays_the_same_events_in_order(
    page: Page, server: RunningServer, api: httpx.Client, offline_run: str, tmp_path: Path
) -> None:
    run_id = offline_run
    open_dashboard(page, server.base_url, run_id)
    with page.expect_download() as download:
        page.click("#export-link")
    bundle = tmp_path / "exported.jkbundle"
    download.value.save_as(bundle)
    with zipfile.ZipFile(bundle) as zf:
        count = json.loads(zf.read("manifest.json"))["run"]["event_count"]
    original = _events(api, run_id, count)

    page.set_input_files("#import-file", str(bundle))
    expect(page.locator("#notice")).to_contain_text("Imported as")
    expect(page.locator("#replay-bar")).to_be_visible()
    expect(page.locator("#run-badges .chip.mode-replay")).to_be_visible()
    replay_id = page.evaluate("() => decodeURIComponent(location.hash.split('run=')[1])")
    assert replay_id != run_id

    # all teams, from the start, as fast as it goes: every event arrives once, in order
    page.select_option("#team-select", "")
    page.click("#replay-start")
    expect(page.locator("#log-list > li.ev")).to_have_count(0)
    page.evaluate(RECORD_ARRIVALS)
    page.select_option("#replay-speed", "256")
    page.click("#replay-play")
    page.wait_for_function(
        "(n) => document.querySelector('#replay-play').dataset.playing === 'false'"
        " && Number(document.querySelector('#replay-range').value) === n",
        arg=count,
        timeout=120_000,
    )
    seen = page.evaluate("() => window.__seen")
    # a tool's return joins its request's row (one step), which moves to where the return is:
    # every event arrives, rows arrive in the order of their latest event, kinds as logged
    assert sorted({seq for seqs, _ in seen for seq in seqs}) == [seq for seq, _ in original]
    latest = [max(seqs) for seqs, _ in seen]
    assert latest == sorted(latest)
    logged = dict(original)
    assert all(logged[seqs[0]] == kind for seqs, kind in seen if len(seqs) == 1)
    expect(page.locator("#run-badges")).to_contain_text(f"{count} events")
    screenshot(page, "replay", animations="disabled")

    # a jump shows the run as it was at that event, without animating anything
    middle = count // 2
    page.evaluate(
        "(n) => { const r = document.querySelector('#replay-range');"
        " r.value = String(n); r.dispatchEvent(new Event('change')); }",
        middle,
    )
    expect(page.locator("#replay-pos")).to_contain_text(f"event {middle} of {count}")
    expect(page.locator("#log-list > li.ev").last).to_have_attribute("data-seq", str(middle))
    assert page.locator("#log-list > li.arrive").count() == 0
    view = api.get(f"/api/runs/{replay_id}/view", params={"at": middle}).json()
    assert view["last_seq"] == middle
