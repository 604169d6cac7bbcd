"""Stage means of the throughput panel are taken over one job set, so no stage's mean can
exceed the total's (issue #16, 10: "simulate 14.2 s" > "total 10.3 s")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from justkernel.events import Event
from justkernel.reports.fold import RunState
from justkernel.store import BlobStore
from justkernel.web.throughput import ReceiptTimes, throughput


def _receipt_event(seq: int, blob: str | None, status: str, cache_hit: bool = False) -> Event:
    payload = {
        "experiment": seq,
        "receipt": {
            "receipt_id": f"r{seq}",
            "mode": "full",
            "status": status,
            "cache_hit": cache_hit,
        },
        "executor": {"host": "vm", "worker": "local", "slot": 0},
        "blobs": [blob] if blob else [],
    }
    return Event(
        "run",
        seq,
        "experiment.receipt",
        "team-001",
        f"2026-01-01T00:00:{seq:02d}+00:00",
        1,
        json.dumps(payload),
    )


def _throughput(
    tmp_path: Path, jobs: list[tuple[dict[str, float | None] | None, str, bool]]
) -> dict:
    blobs = BlobStore(tmp_path)
    state = RunState("run")
    for seq, (durations, status, cache_hit) in enumerate(jobs, start=1):
        blob = blobs.put(json.dumps({"durations": durations}).encode()) if durations else None
        state.feed(_receipt_event(seq, blob, status, cache_hit))
    return asyncio.run(throughput(state, ReceiptTimes(blobs)))


def test_each_stage_is_averaged_over_the_jobs_that_ran(tmp_path: Path) -> None:
    data = _throughput(
        tmp_path,
        [
            # a slow job that simulated, and a quick one whose compile failed (no simulation)
            ({"compile": 2.0, "simulate": 12.0, "total": 15.0}, "measured", False),
            ({"compile": 3.0, "simulate": None, "total": 3.0}, "compile_failed", False),
            # a cache hit reuses an old receipt's durations: no work was done, not counted
            ({"compile": 2.0, "simulate": 12.0, "total": 15.0}, "measured", True),
            # a job whose receipt blob is not in the store has no durations at all
            (None, "measured", False),
        ],
    )
    means = data["stage_means"]
    assert data["stage_jobs"] == 2
    assert means["total"] == 9.0
    assert means["compile"] == 2.5
    assert means["simulate"] == 6.0  # 12 s over two jobs; averaged over the one: 12 > 9
    assert means["functional"] == 0.0
    assert all(v is not None and v <= means["total"] for v in means.values())


def test_no_job_that_ran_means_no_figure(tmp_path: Path) -> None:
    data = _throughput(tmp_path, [(None, "measured", False)])
    assert data["stage_jobs"] == 0
    assert set(data["stage_means"].values()) == {None}  # missing, never 0
