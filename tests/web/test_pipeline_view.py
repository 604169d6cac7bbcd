"""The pipeline view of a real ascendc-cpu receipt, against the real `justkernel serve`: the
endpoint's lanes and refusals, the dashboard's view from the work log (live, then in a replay
of the run's export, in both languages), and the HTML report's inline SVG."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from justkernel.core.receipts import Receipt
from justkernel.events.run_archive import InvalidBundle
from justkernel.events.run_export import export_run
from justkernel.events.run_import import import_bundle
from justkernel.lab import Lab
from tests.support.server import RunningServer
from tests.web.conftest import open_dashboard, open_folder, screenshot
from tests.web.pipeline_support import TEAM, real_receipt, trace_shas, write_pipeline_run
from tests.web.synthetic import in_lab, judger_events, write_run

LANES = ("MTE2", "V", "MTE3", "S")


@pytest.fixture(scope="module")
def receipt() -> Receipt:
    return real_receipt()


@pytest.fixture(scope="module")
def pipeline_run(lab_dir: Path, receipt: Receipt, server: RunningServer) -> dict[str, str]:
    run_id, sha = write_pipeline_run(lab_dir, receipt)
    return {"run_id": run_id, "sha": sha}


def _url(run_id: str, sha: str) -> str:
    return f"/api/runs/{run_id}/receipts/{sha}/pipeline"


def test_endpoint_returns_lanes_of_a_real_receipt(
    api: httpx.Client, pipeline_run: dict[str, str], receipt: Receipt
) -> None:
    run_id, sha = pipeline_run["run_id"], pipeline_run["sha"]
    cycle = receipt.cycles[1]
    assert cycle.pipeline is not None
    answer = api.get(_url(run_id, sha), params={"case": cycle.case_id})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["case"] == cycle.case_id
    assert [c["case_id"] for c in body["cases"]] == receipt.perf_case_ids
    assert body["pipeline"]["bound_pipe"] == cycle.pipeline.bound_pipe
    timeline = body["timeline"]
    assert timeline["total"] == cycle.pipeline.total
    assert len(timeline["cores"]) == cycle.pipeline.block_dim
    lanes = {lane["pipe"]: lane for lane in timeline["cores"][0]["lanes"]}
    assert tuple(lanes) == LANES  # msprof's order: loads, vector, stores, scalar
    for pipe, figures in cycle.pipeline.pipes.items():
        # the merged busy time is exactly the receipt's, however the lane is drawn
        assert lanes[pipe]["busy"] == figures.busy
        assert lanes[pipe]["utilisation"] == pytest.approx(figures.utilisation, abs=1e-5)
        segments = lanes[pipe]["segments"]
        assert 0 < len(segments) // 3 <= body["max_segments"]
        assert sum(segments[2::3]) == figures.busy
    assert timeline["downsampled"] is any(lane["downsampled"] for lane in lanes.values())
    # the default case is the first perf case; a second read is the cached answer
    first = api.get(_url(run_id, sha)).json()
    assert first["case"] == receipt.perf_case_ids[0]
    assert api.get(_url(run_id, sha), params={"case": cycle.case_id}).content == answer.content


def test_endpoint_refuses_what_the_run_does_not_name(
    api: httpx.Client,
    server: RunningServer,
    lab_dir: Path,
    pipeline_run: dict[str, str],
    receipt: Receipt,
) -> None:
    run_id, sha = pipeline_run["run_id"], pipeline_run["sha"]
    other = in_lab(
        lab_dir / "data",
        lab_dir / "config",
        lambda lab: write_run(lab, "other run", judger_events("cand-p1", "cand-p2")),
    )
    trace = next(iter(trace_shas(receipt).values()))
    cases = [
        (_url(other, sha), 404, "names receipt"),  # a blob of another run
        (_url(run_id, trace), 404, "names receipt"),  # a trace blob is no receipt
        (_url(run_id, hashlib.sha256(b"x").hexdigest()), 404, "names receipt"),
        (_url(run_id, "../../etc"), 404, ""),  # not even routed
        (_url(run_id, "Z" * 64), 400, "SHA-256"),
        (_url(run_id, sha[:40]), 400, "SHA-256"),
        (_url("run-nope", sha), 404, "no run"),
        (_url(run_id, sha) + "?case=c01_row_f32", 404, "no perf case"),
        (_url(run_id, sha) + "?case=" + "x" * 200, 400, "case"),
    ]
    for url, status, detail in cases:
        answer = api.get(url)
        assert answer.status_code == status, (url, answer.text)
        if detail:
            assert detail in answer.json()["detail"], (url, answer.text)
    anonymous = httpx.get(server.base_url + _url(run_id, sha), timeout=30)
    assert anonymous.status_code == 401


def test_pipeline_view_from_the_work_log_live_and_in_a_replay(
    page: Page,
    server: RunningServer,
    pipeline_run: dict[str, str],
    receipt: Receipt,
    tmp_path: Path,
) -> None:
    run_id = pipeline_run["run_id"]
    open_dashboard(page, server.base_url, run_id)
    page.select_option("#team-select", TEAM)
    _check_view(page, receipt, shot="pipeline")
    page.click("#pipeline-close")
    expect(page.locator("#pipeline-view")).to_be_hidden()
    # the results' leaderboard opens the same view for the team's best receipt
    page.click("[data-tab=results]")
    page.locator("#leaderboard tr[data-team='team-asc'] .pipeline-open").click()
    expect(page.locator("#pipeline-view .pipeline-bound")).to_contain_text("Bound pipe")
    page.click("#pipeline-close")
    page.click("[data-tab=live]")

    with page.expect_download() as download:
        page.click("#export-link")
    bundle = tmp_path / "pipeline.jkbundle"
    download.value.save_as(bundle)
    page.set_input_files("#import-file", str(bundle))
    expect(page.locator("#notice")).to_contain_text("Imported as")
    expect(page.locator("#run-badges .chip.mode-replay")).to_be_visible()
    replay_id = page.evaluate("() => decodeURIComponent(location.hash.split('run=')[1])")
    assert replay_id != run_id
    page.select_option("#team-select", TEAM)
    _check_view(page, receipt)


def _check_view(page: Page, receipt: Receipt, shot: str | None = None) -> None:
    button = page.locator("#log-list li.kind-experiment-receipt .pipeline-open").last
    button.click()
    view = page.locator("#pipeline-view")
    expect(view).to_be_visible()
    first = receipt.cycles[0]
    assert first.pipeline is not None
    expect(view.locator(".pipeline-bound")).to_contain_text(
        f"Bound pipe: {first.pipeline.bound_pipe}"
    )
    lanes = view.locator("canvas.pipeline-chart")
    expect(lanes).to_have_attribute("data-lanes", ",".join(LANES))
    drawn = int(lanes.get_attribute("data-segments") or "0")
    assert drawn > 0
    for pipe in LANES:
        expect(view.locator(f".pipeline-figures tr[data-pipe='{pipe}']")).to_be_visible()
    if shot:
        screenshot(page, shot, animations="disabled")
    # the case selector holds the three perf cases and redraws on change
    options = view.locator("select.pipeline-case option")
    expect(options).to_have_count(len(receipt.perf_case_ids))
    second = receipt.cycles[1]
    view.locator("select.pipeline-case").select_option(second.case_id)
    # another case's trace is read and parsed by the server: on a loaded 2-core CI box, with
    # an offline run of the same server building beside it, that can take more than 5 s
    expect(lanes).to_have_attribute("data-case", second.case_id, timeout=30_000)
    expect(view.locator(".pipeline-note")).not_to_contain_text("not available")
    # the other language
    page.click("#lang-btn")
    expect(view.locator(".pipeline-bound")).to_contain_text("瓶颈流水线")
    expect(view.locator(".pipeline-figures th").first).to_have_text("流水线")
    page.click("#lang-btn")
    expect(view.locator(".pipeline-bound")).to_contain_text("Bound pipe")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def _forge(path: Path, members: dict[str, bytes]) -> Path:
    """Rewrite the bundle with a manifest that agrees with `members` (a forger's best)."""
    manifest = json.loads(members["manifest.json"])
    manifest["members"] = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in members.items()
        if name != "manifest.json"
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_an_export_carries_the_traces_its_receipts_name_and_import_checks_them(
    api: httpx.Client, pipeline_run: dict[str, str], receipt: Receipt, tmp_path: Path
) -> None:
    answer = api.get(f"/api/runs/{pipeline_run['run_id']}/export")
    assert answer.status_code == 200, answer.text
    bundle = tmp_path / "run.jkbundle"
    bundle.write_bytes(answer.content)
    members = _members(bundle)
    traces = set(trace_shas(receipt).values())
    assert {f"blobs/{sha}" for sha in traces} <= members.keys()
    assert f"blobs/{pipeline_run['sha']}" in members

    folder = open_folder("jk-pipeline-import-")

    def load(path: Path) -> tuple[bool, ...] | str:
        async def work(lab: Lab) -> tuple[bool, ...] | str:
            try:
                await import_bundle(lab, path)
            except InvalidBundle as exc:
                return str(exc)
            return tuple(lab.blobs.has(sha) for sha in sorted(traces))

        return in_lab(folder / "data", folder / "config", work)

    # a fresh lab gets the traces, hash-checked like every blob
    assert load(bundle) == (True,) * len(traces)
    one = sorted(traces)[0]
    tampered = dict(members)
    data = bytearray(tampered[f"blobs/{one}"])
    data[len(data) // 2] ^= 0xFF  # one byte of the trace, the manifest left as it was
    tampered[f"blobs/{one}"] = bytes(data)
    with zipfile.ZipFile(tmp_path / "tampered.jkbundle", "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in tampered.items():
            zf.writestr(name, content)
    assert "does not match its SHA-256" in str(load(tmp_path / "tampered.jkbundle"))
    stray = dict(members)
    junk = b"\x1f\x8b a blob no receipt names"
    stray[f"blobs/{hashlib.sha256(junk).hexdigest()}"] = junk
    assert "is not named by any event or receipt" in str(
        load(_forge(tmp_path / "stray.jkbundle", stray))
    )
    # an older bundle without traces still imports: the view then shows the figures only
    older = {k: v for k, v in members.items() if k.removeprefix("blobs/") not in traces}
    other = open_folder("jk-pipeline-older-")
    imported = in_lab(
        other / "data",
        other / "config",
        lambda lab: import_bundle(lab, _forge(tmp_path / "older.jkbundle", older)),
    )
    assert imported.blob_count == len(members) - 1 - 1 - len(traces)


def test_an_export_keeps_only_the_traces_of_the_receipts_asked_for(
    lab_dir: Path, pipeline_run: dict[str, str], receipt: Receipt, tmp_path: Path
) -> None:
    """A small bundle (the recorded demo) keeps the traces of chosen receipts only; the
    receipts themselves all stay."""
    traces = set(trace_shas(receipt).values())

    def members_of(chosen: set[str]) -> set[str]:
        out = tmp_path / f"run-{len(chosen)}.jkbundle"
        in_lab(
            lab_dir / "data",
            lab_dir / "config",
            lambda lab: export_run(lab, pipeline_run["run_id"], out, trace_receipts=chosen),
        )
        return set(_members(out))

    kept = members_of({pipeline_run["sha"]})
    assert {f"blobs/{sha}" for sha in traces} <= kept
    dropped = members_of(set())
    assert f"blobs/{pipeline_run['sha']}" in dropped
    assert not {f"blobs/{sha}" for sha in traces} & dropped
    assert kept - dropped == {f"blobs/{sha}" for sha in traces}


def test_html_report_shows_the_pipeline_svg(
    api: httpx.Client, pipeline_run: dict[str, str], receipt: Receipt
) -> None:
    answer = api.get(f"/api/runs/{pipeline_run['run_id']}/report.html")
    assert answer.status_code == 200, answer.text
    html = answer.text
    svgs = re.findall(r"<svg[^>]*class=\"pipeline\"[^>]*>.*?</svg>", html, re.S)
    assert len(svgs) == len(receipt.perf_case_ids)
    for pipe in LANES:
        assert f">{pipe}<" in svgs[0]
    assert "<script" not in html
    for cycle in receipt.cycles:
        assert cycle.pipeline is not None
        bound = cycle.pipeline.bound_pipe
        assert f"Pipeline of {cycle.case_id}: bound pipe: {bound}" in html
        assert f"<td>{bound} (bound)</td><td>{cycle.pipeline.pipes[bound].busy:,}</td>" in html
