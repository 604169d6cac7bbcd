"""The candidate lineage on the real `justkernel serve` and Debian's Chromium: candidates frozen
through the real store (which decides each parent), the /lineage endpoints (nodes, one node's
receipt, diff, points and messages), what they refuse (another run's candidate, no session),
an imported bundle whose parents lie, and the Lineage tab opened by a deep link and clicked."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, screenshot
from tests.web.synthetic import HOSTILE, in_lab, judger_events, write_run


def _nodes(api: httpx.Client, run_id: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    answer = api.get(f"/api/runs/{run_id}/lineage")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    cols = body["columns"]
    return {row[0]: dict(zip(cols, row, strict=True)) for row in body["rows"]}, body


def test_lineage_nodes_and_one_nodes_panel(api: httpx.Client, lineage_run: dict[str, str]) -> None:
    ids = lineage_run
    nodes, body = _nodes(api, ids["run"])
    assert list(nodes) == [ids["a"], ids["b"], ids["c"], ids["d"]]  # in freezing order
    assert (nodes[ids["a"]]["parent"], nodes[ids["a"]]["kind"]) == (None, None)
    assert (nodes[ids["b"]]["parent"], nodes[ids["b"]]["kind"]) == (ids["a"], "own")
    assert nodes[ids["c"]]["parent"] is None  # team-002 had nothing before
    assert (nodes[ids["d"]]["parent"], nodes[ids["d"]]["kind"]) == (ids["c"], "adopted")
    assert nodes[ids["b"]]["official"] == ["official_pass", 1, 2]
    assert nodes[ids["b"]]["cycles"] == 700_000_000
    assert nodes[ids["b"]]["team"] == "team-001"
    assert body["dropped_parents"] == 0

    detail = api.get(f"/api/runs/{ids['run']}/lineage/{ids['b']}").json()
    assert (detail["parent"], detail["parent_kind"]) == (ids["a"], "own")
    assert detail["children"] == []
    diff = detail["diff"]["text"]
    assert diff.startswith("--- a/op_kernel/kernel.cpp\n+++ b/op_kernel/kernel.cpp\n")
    added = [line for line in diff.splitlines() if line.startswith("+") and "tuned" in line]
    assert added == [f"+    // tuned {HOSTILE}"]
    assert detail["receipt"]["cases_passed"] == 15
    assert detail["receipt"]["total_est_cycles"] == 700_000_000
    assert detail["pipeline_url"] is None  # no receipt blob with pipeline figures
    assert detail["official"]["summary"] == {
        "status": "official_pass",
        "passed": 1,
        "points": 2,
        "prof_sum_us": 30.0,
    }
    assert [m["message_id"] for m in detail["messages"]] == ["msg-lin-1", "msg-lin-fb"]
    feedback = detail["messages"][1]
    assert (feedback["summary_code"], feedback["summary_params"]["status"]) == (
        "feedback_own",
        "official_pass",
    )

    adopted = api.get(f"/api/runs/{ids['run']}/lineage/{ids['d']}").json()
    assert (adopted["parent"], adopted["parent_kind"]) == (ids["c"], "adopted")
    assert "+    // adopted" in adopted["diff"]["text"].splitlines()
    root = api.get(f"/api/runs/{ids['run']}/lineage/{ids['a']}").json()
    assert root["parent"] is None and root["children"] == [ids["b"]]
    assert root["diff"]["text"].startswith("--- /dev/null\n+++ b/op_kernel/kernel.cpp\n")


def test_lineage_refuses_another_runs_candidate_and_a_stranger(
    api: httpx.Client, server: RunningServer, lab_dir: Path, lineage_run: dict[str, str]
) -> None:
    ids = lineage_run
    other = in_lab(
        lab_dir / "data",
        lab_dir / "config",
        lambda lab: write_run(lab, "other run", judger_events("cand-l1", "cand-l2")),
    )
    cases = [
        (f"/api/runs/{other}/lineage/{ids['b']}", 404, "no frozen candidate"),
        (f"/api/runs/{ids['run']}/lineage/cand-l1", 404, "no frozen candidate"),
        (f"/api/runs/{ids['run']}/lineage/..%2F..%2Fetc", 404, ""),
        ("/api/runs/run-nope/lineage", 404, "no run"),
        (f"/api/runs/{ids['run']}/lineage?at=x", 400, "at"),
    ]
    for url, status, detail in cases:
        answer = api.get(url)
        assert answer.status_code == status, (url, answer.text)
        if detail:
            assert detail in answer.json()["detail"], (url, answer.text)
    stranger = httpx.get(f"{server.base_url}/api/runs/{ids['run']}/lineage", timeout=30)
    assert stranger.status_code == 401
    # another run's nodes never mention this run's candidates
    other_nodes, _ = _nodes(api, other)
    assert not set(other_nodes) & {ids["a"], ids["b"], ids["c"], ids["d"]}


def _lying_bundle(bundle: bytes, ids: dict[str, str]) -> bytes:
    """The run's export with its candidates' parents rewritten to lie, and a manifest that
    agrees (a forger's best)."""
    with zipfile.ZipFile(io.BytesIO(bundle)) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    lies = {
        ids["a"]: (ids["d"], "own"),  # a later candidate: would close a cycle a → d → c
        ids["b"]: (ids["a"], "trusted"),  # a kind the lab never writes
        ids["d"]: ("cand-l1", "adopted"),  # another run's candidate
    }
    lines = []
    for line in members["events.jsonl"].decode().splitlines():
        event = json.loads(line)
        payload = event["payload"]
        if event["kind"] == "candidate.frozen" and payload["candidate_id"] in lies:
            payload["parent_id"], payload["parent_kind"] = lies[payload["candidate_id"]]
        lines.append(json.dumps(event, separators=(",", ":")))
    members["events.jsonl"] = ("\n".join(lines) + "\n").encode()
    manifest = json.loads(members["manifest.json"])
    manifest["members"] = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in members.items()
        if name != "manifest.json"
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_an_imported_bundle_with_lying_parents_draws_none_of_them(
    api: httpx.Client, lineage_run: dict[str, str]
) -> None:
    ids = lineage_run
    exported = api.get(f"/api/runs/{ids['run']}/export")
    assert exported.status_code == 200, exported.text
    answer = api.post(
        "/api/import?name=lying.jkbundle",
        content=_lying_bundle(exported.content, ids),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code == 200, answer.text
    imported = answer.json()["run"]["id"]
    nodes, body = _nodes(api, imported)
    assert list(nodes) == [ids["a"], ids["b"], ids["c"], ids["d"]]
    assert {k: (n["parent"], n["kind"]) for k, n in nodes.items()} == {
        ids["a"]: (None, None),
        ids["b"]: (None, None),
        ids["c"]: (None, None),
        ids["d"]: (None, None),
    }
    assert body["dropped_parents"] == 3
    detail = api.get(f"/api/runs/{imported}/lineage/{ids['d']}").json()
    assert detail["parent"] is None and "parent_id" not in detail["frozen"]
    # the source travelled with the bundle: the panel diffs it against nothing
    assert detail["diff"]["text"].startswith("--- /dev/null\n")


def test_lineage_tab_from_a_deep_link_then_a_click(
    page: Page, server: RunningServer, lineage_run: dict[str, str]
) -> None:
    ids = lineage_run
    page.goto(f"{server.base_url}/#run={ids['run']}&lineage={ids['b']}")
    page.wait_for_selector("body[data-ready=true]")
    panel = page.locator("#tab-lineage")
    expect(panel).to_be_visible()
    expect(page.locator("#lineage g.lin-node")).to_have_count(4)
    selected = page.locator(f'#lineage-detail .lin-detail-body[data-candidate="{ids["b"]}"]')
    expect(selected).to_be_visible()
    expect(page.locator(f'#lineage g.lin-node.selected[data-id="{ids["b"]}"]')).to_have_count(1)
    added = page.locator("#lineage-detail .lin-line.add")
    expect(added.filter(has_text="tuned")).to_have_count(1)
    expect(page.locator("#lineage-detail")).to_contain_text("official pass")
    expect(page.locator("#lineage-detail")).to_contain_text(f"{ids['b']} tiles the reduction")
    assert page.evaluate("() => window.__pwned") is None  # the source's markup stayed text
    assert page.locator("#lineage-detail img").count() == 0

    page.locator(f'#lineage g.lin-node[data-id="{ids["d"]}"]').click()
    adopted = page.locator(f'#lineage-detail .lin-detail-body[data-candidate="{ids["d"]}"]')
    expect(adopted).to_be_visible()
    expect(adopted).to_contain_text("adopted from another team")
    expect(adopted.locator(".lin-line.add").filter(has_text="adopted")).to_have_count(1)
    expect(page).to_have_url(f"{server.base_url}/#run={ids['run']}&lineage={ids['d']}")
    screenshot(page, "lineage")

    # the hash changed by a link on the open page selects that node too
    page.evaluate(f"() => {{ location.hash = 'run={ids['run']}&lineage={ids['a']}'; }}")
    root = page.locator(f'#lineage-detail .lin-detail-body[data-candidate="{ids["a"]}"]')
    expect(root).to_be_visible()
    expect(root).to_contain_text("none (a first candidate)")


def test_lineage_tab_speaks_chinese(
    page: Page, server: RunningServer, lineage_run: dict[str, str]
) -> None:
    open_dashboard(page, server.base_url, lineage_run["run"])
    page.click("#lang-btn")
    page.click('[data-tab="lineage"]')
    expect(page.locator("#lineage .lin-bar")).to_contain_text("个候选")
    page.locator(f'#lineage g.lin-node[data-id="{lineage_run["d"]}"]').click()
    expect(page.locator("#lineage-detail")).to_contain_text("采纳自其他队伍")
    # the Judger's feedback naming b, in the page's words: no English status or sentence left
    page.locator(f'#lineage g.lin-node[data-id="{lineage_run["b"]}"]').click()
    summaries = page.locator("#lineage-detail .lin-messages .lin-message-summary")
    expect(summaries.last).to_have_text(f"你们的候选 {lineage_run['b']}：官方通过")
    expect(page.locator("#lineage-detail .lin-messages li").last).to_contain_text("评审")
    assert "official_pass" not in page.locator("#lineage-detail").inner_text()
