"""The bundled demo session is a valid bundle of a real offline run that went all the way
through the Judger: reviews, nominations, submissions to the local judge and official results
with per-point data, and feedback acknowledged by the teams."""

from __future__ import annotations

from collections import Counter

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
