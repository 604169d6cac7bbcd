"""The throughput panel: evaluation jobs as bars on worker-slot lanes, queue length over time,
and seconds per stage, from the receipts the events name (blob store), never from a worker.

A receipt blob carries when the job was submitted, started and finished and its stage
durations; a job whose blob is not in this lab's store is drawn at its event time only.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

from justkernel.reports.fold import RunState
from justkernel.reports.team_state import Job
from justkernel.store import BlobStore

MAX_JOBS = 300  # the most recent jobs drawn
STAGES = ("queued", "static_check", "compile", "functional", "simulate", "total")
_CACHE_SIZE = 4000


class ReceiptTimes:
    """Timing fields of receipt blobs, read once each (receipts never change)."""

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs
        self._cache: OrderedDict[str, dict[str, Any] | None] = OrderedDict()

    def _read(self, sha: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._blobs.get(sha))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        return {
            "submitted_at": data.get("submitted_at"),
            "started_at": data.get("started_at"),
            "finished_at": data.get("finished_at"),
            "durations": data.get("durations") or {},
        }

    async def get_many(self, shas: list[str]) -> dict[str, dict[str, Any] | None]:
        missing = [s for s in dict.fromkeys(shas) if s not in self._cache]
        if missing:
            read = await asyncio.to_thread(lambda: {s: self._read(s) for s in missing})
            for sha, times in read.items():
                self._cache[sha] = times
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return {s: self._cache.get(s) for s in shas}


def _job_row(job: Job, times: dict[str, Any] | None) -> dict[str, Any]:
    times = times or {}
    durations = times.get("durations") or {}
    return {
        **job.to_dict(),
        "submitted_at": times.get("submitted_at"),
        "started_at": times.get("started_at"),
        "finished_at": times.get("finished_at") or job.ts,
        "stages": {s: durations.get(s) for s in STAGES},
    }


def _queue_series(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """Queue length steps: +1 when a job is submitted, -1 when it starts."""
    steps: list[tuple[str, int]] = []
    for row in rows:
        if row["submitted_at"] and row["started_at"]:
            steps += [(row["submitted_at"], 1), (row["started_at"], -1)]
    steps.sort()
    length, series = 0, []
    for ts, delta in steps:
        length += delta
        series.append([ts, length])
    return series


def _stage_means(rows: list[dict[str, Any]]) -> tuple[dict[str, float | None], int]:
    """Mean seconds per stage over one job set, so the stages add up to at most the total.

    The set is the jobs that ran (a receipt with a total, not a cache hit); a stage such a
    job skipped (compile failed, so no simulation) took it 0 s. Averaging each stage over the
    jobs that happened to have it mixed sets: simulate, run by the slow jobs only, came out
    longer than total. Returns the means and the size of the set.
    """
    ran = [r for r in rows if r["stages"].get("total") is not None and not r.get("cache_hit")]
    if not ran:
        return {stage: None for stage in STAGES}, 0
    means: dict[str, float | None] = {}
    for stage in STAGES:
        values = [r["stages"].get(stage) or 0.0 for r in ran]
        means[stage] = round(sum(values) / len(ran), 3)
    return means, len(ran)


async def throughput(state: RunState, times: ReceiptTimes) -> dict[str, Any]:
    jobs = state.jobs[-MAX_JOBS:]
    found = await times.get_many([j.blob for j in jobs if j.blob])
    rows = [_job_row(j, found.get(j.blob) if j.blob else None) for j in jobs]
    means, stage_jobs = _stage_means(rows)
    lanes: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        lanes.setdefault(row["lane"], []).append(row)
    return {
        "lanes": [{"lane": name, "jobs": lanes[name]} for name in sorted(lanes)],
        "queue": _queue_series(rows),
        "stage_means": means,
        "stage_jobs": stage_jobs,
        "jobs_total": len(state.jobs),
        "jobs_shown": len(rows),
    }
