"""The bundled demo session is a valid bundle of a real offline run that went all the way
through the Judger: reviews, nominations, submissions to the local judge and official results
with per-point data, and feedback acknowledged by the teams."""

from __future__ import annotations

import zipfile
from collections import Counter

from justkernel.events.run_archive import receipt_trace_refs
from justkernel.events.run_archive_check import check_bundle
from justkernel.web.demo import demo_bundle_path


def test_the_demo_shows_the_judger_and_official_results() -> None:
    bundle = check_bundle(demo_bundle_path(), 64 * 1024 * 1024)
    kinds = Counter(e.kind for e in bundle.events)
    for kind in ("candidate.frozen", "judger.review", "judger.nomination", "judger.submission"):
        assert kinds[kind] > 0, kind
    results = [e for e in bundle.events if e.kind == "official.result"]
    submitted = {e.payload["submission_id"] for e in bundle.events if e.kind == "judger.submission"}
    assert results and {r.payload["submission_id"] for r in results} <= submitted
    for result in results:
        assert len(result.payload["points"]) == 15  # the hidden points, each with its data
        assert result.payload["backend"] == "local"
    assert bundle.manifest.run.meta.get("simulated") is True
    assert kinds["a2a.acked"] > 0  # the teams read the official feedback


def test_the_demo_is_an_ascend_c_run_with_pipeline_traces() -> None:
    """Recorded on the lab's default target: every receipt comes from ascendc-cpu, and each
    team's best receipt brings the traces its pipeline view draws (the only ones kept)."""
    path = demo_bundle_path()
    bundle = check_bundle(path, 64 * 1024 * 1024)
    assert bundle.manifest.run.meta.get("toolchain") == "ascendc-cpu"
    receipts = [e for e in bundle.events if e.kind == "experiment.receipt"]
    assert receipts
    assert {e.payload["executor"]["toolchain_id"] for e in receipts} == {"ascendc-cpu"}
    with zipfile.ZipFile(path) as archive:
        traces = {
            ref
            for e in receipts
            for sha in e.payload.get("blobs") or []
            if f"blobs/{sha}" in archive.namelist()
            for ref in receipt_trace_refs(archive.read(f"blobs/{sha}"))
        }
    kept = traces & set(bundle.blobs)
    assert kept, "no receipt of the demo brings its pipeline traces"
    teams = {e.team for e in receipts}
    assert len(kept) <= 3 * len(teams)  # three perf cases of one best receipt per team
