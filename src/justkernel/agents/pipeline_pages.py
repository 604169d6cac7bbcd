"""`read_simulation_results(section="pipeline")`: an ascendc-cpu perf case's per-pipe timeline,
summarised for a model and paged.

A trace holds tens of thousands of instructions; a model needs what they add up to. Per core
and pipe: busy cycles and utilisation over the merged intervals (`core.pipeline_trace`), the
number of intervals, the longest idle gaps with the share of each gap the other pipes of that
core were busy (a V gap 0.97 covered by MTE2 reads "V waits on loads"), and the instructions
that cost the most cycles with their costliest source line; and over all of a lane's idle
time, the share each other pipe was busy. Lanes of the slowest core come first (the receipt's
figures are that core's); pages are filled with whole lanes up to `PAGE_CHARS` characters of
JSON, so every answer stays small.
"""

from __future__ import annotations

import bisect
import heapq
import json
from collections import OrderedDict
from collections.abc import Callable
from statistics import median
from typing import Any

from justkernel.core.pipeline_trace import (
    TRACE_SUFFIX,
    Lane,
    NotATrace,
    TraceLanes,
    load_trace,
    read_lanes,
)
from justkernel.core.receipts import CycleResult, Receipt

PAGE_CHARS = 4000
GAPS = 3  # longest idle gaps shown per lane
OPS = 3  # costliest instruction names shown per lane
CACHED_TRACES = 4
PAGE_FIELDS = 60  # room for "page", "pages" and "next_page"


class PipelineUnavailable(LookupError):
    """The receipt or case has no timeline to page; the message is for the model."""


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _covered(merged: list[tuple[int, int]], start: int, end: int) -> int:
    """Cycles of [start, end) inside the disjoint, sorted intervals `merged`."""
    i = max(0, bisect.bisect_right(merged, (start, start)) - 1)
    total = 0
    while i < len(merged) and merged[i][0] < end:
        s, e = merged[i]
        total += max(0, min(e, end) - max(s, start))
        i += 1
    return total


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Cycles two disjoint, sorted interval lists share (one sweep over both)."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _idle(lane: Lane, makespan: int) -> list[tuple[int, int]]:
    """The idle stretches of a lane within [0, makespan], in time order."""
    edges = [0] + [x for s, e in lane.merged for x in (s, e)] + [makespan]
    return [
        (edges[i], edges[i + 1]) for i in range(0, len(edges) - 1, 2) if edges[i + 1] > edges[i]
    ]


def _lane_entry(lane: Lane, others: list[Lane], makespan: int) -> dict[str, Any]:
    stretches = _idle(lane, makespan)
    gaps = []
    for a, b in heapq.nlargest(GAPS, stretches, key=lambda g: (g[1] - g[0], -g[0])):
        busy = {o.pipe: round(_covered(o.merged, a, b) / (b - a), 2) for o in others}
        gaps.append(
            {
                "from": a,
                "to": b,
                "cycles": b - a,
                "others_busy": {p: v for p, v in busy.items() if v},
            }
        )
    ops = sorted(lane.ops.items(), key=lambda item: (-item[1].cycles, item[0]))[:OPS]
    idle = makespan - lane.busy
    # over ALL of this lane's idle time, the share each other pipe was busy: "V idle 0.99 while
    # MTE2 busy" is V waiting on loads
    idle_busy = {
        o.pipe: round((o.busy - _overlap(o.merged, lane.merged)) / idle, 2) for o in others
    }
    return {
        "core": lane.core,
        "core_makespan": makespan,
        "pipe": lane.pipe,
        "busy": lane.busy,
        "utilisation": round(lane.busy / makespan, 3) if makespan else None,
        "intervals": len(lane.merged),
        "instructions": lane.events,
        "first_start": lane.merged[0][0] if lane.merged else None,
        "last_end": lane.merged[-1][1] if lane.merged else None,
        "idle": {
            "cycles": idle,
            "stretches": len(stretches),
            "others_busy": {p: v for p, v in idle_busy.items() if v} if idle else {},
        },
        "longest_idle_gaps": gaps,
        "top_instructions": [
            {"op": name, "calls": st.calls, "cycles": st.cycles, "site": st.top_site()}
            for name, st in ops
        ],
    }


def _lane_entries(read: TraceLanes) -> list[dict[str, Any]]:
    """Every lane's entry, cores slowest first, pipes in chart order within a core."""
    cores = sorted(read.cores(), key=lambda c: (-read.makespan(c), c))
    entries = []
    for core in cores:
        lanes = [ln for ln in read.lanes if ln.core == core]
        makespan = read.makespan(core)
        entries += [_lane_entry(ln, [o for o in lanes if o is not ln], makespan) for ln in lanes]
    return entries


def paginate(
    header: dict[str, Any], lanes: list[dict[str, Any]], page_chars: int = PAGE_CHARS
) -> list[dict[str, Any]]:
    """Whole lanes per page while the page's JSON stays within `page_chars` (a lane larger
    than that alone gets a page of its own); the header goes on page 1."""
    pages: list[dict[str, Any]] = []
    current: dict[str, Any] = {**header, "lanes": []}
    for lane in lanes:
        trial = {**current, "lanes": [*current["lanes"], lane]}
        if current["lanes"] and len(_dumps(trial)) + PAGE_FIELDS > page_chars:
            pages.append(current)
            current = {"case_id": header["case_id"], "lanes": [lane]}
        else:
            current = trial
    pages.append(current)
    return pages


def _trace_sha(cycle: CycleResult) -> str | None:
    return next((log.sha256 for log in cycle.logs if log.name.endswith(TRACE_SUFFIX)), None)


class PipelinePages:
    """Builds and keeps the pages of the last few traces a team read (a trace never changes,
    and reading one takes a fraction of a second)."""

    def __init__(self, blob: Callable[[str], bytes], page_chars: int = PAGE_CHARS) -> None:
        self._blob = blob
        self._page_chars = page_chars
        self._pages: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def case(self, receipt: Receipt, case_id: str | None) -> CycleResult:
        """The perf case to page (the costliest when none is named), or PipelineUnavailable."""
        if not receipt.cycles:
            raise PipelineUnavailable(
                "this receipt has no perf cases (a probe, or the job stopped before them): "
                "run simulate_kernel(mode='full')"
            )
        with_pipeline = [c for c in receipt.cycles if c.pipeline is not None]
        if not with_pipeline:
            if receipt.executor.toolchain_id == "cpu" or any(c.counters for c in receipt.cycles):
                raise PipelineUnavailable(
                    "no pipeline for the cpu toolchain: its perf cases carry callgrind counters "
                    "(section='profile'); per-pipe timelines come from ascendc-cpu receipts"
                )
            raise PipelineUnavailable("this receipt's perf cases have no pipeline figures")
        if case_id is None:
            return max(with_pipeline, key=lambda c: c.pipeline.total if c.pipeline else 0)
        for c in with_pipeline:
            if c.case_id == case_id:
                return c
        known = ", ".join(c.case_id for c in with_pipeline)
        raise PipelineUnavailable(f"no perf case {case_id!r} with a pipeline (known: {known})")

    def pages(self, receipt: Receipt, cycle: CycleResult) -> list[dict[str, Any]]:
        sha = _trace_sha(cycle)
        if sha is None:
            raise PipelineUnavailable(f"the receipt names no trace for {cycle.case_id}")
        if sha in self._pages:
            self._pages.move_to_end(sha)
            return self._pages[sha]
        try:
            blob = self._blob(sha)
        except (OSError, ValueError):  # not in this lab's store, or corrupt there
            raise PipelineUnavailable(
                f"the trace of {cycle.case_id} is not available on this host"
            ) from None
        try:
            read = read_lanes(load_trace(blob))
        except NotATrace as exc:
            raise PipelineUnavailable(
                f"the trace of {cycle.case_id} is unreadable: {exc}"
            ) from None
        header = self._header(receipt, cycle, read)
        pages = paginate(header, _lane_entries(read), self._page_chars)
        self._pages[sha] = pages
        while len(self._pages) > CACHED_TRACES:
            self._pages.popitem(last=False)
        return pages

    @staticmethod
    def _header(receipt: Receipt, cycle: CycleResult, read: TraceLanes) -> dict[str, Any]:
        assert cycle.pipeline is not None
        spans = [read.makespan(core) for core in read.cores()]
        return {
            "receipt_id": receipt.job_key,
            "case_id": cycle.case_id,
            "cases": [c.case_id for c in receipt.cycles if c.pipeline is not None],
            "unit": "cycles",
            "total_cycles": cycle.pipeline.total,
            "bound_pipe": cycle.pipeline.bound_pipe,
            "block_dim": cycle.pipeline.block_dim,
            "trace_truncated": cycle.pipeline.trace_truncated,
            "trace_instructions": sum(ln.events for ln in read.lanes),
            "core_makespan": {
                "max": max(spans, default=0),
                "median": round(median(spans)) if spans else 0,
                "min": min(spans, default=0),
            },
            "order": "lanes of the slowest core first (the receipt's pipe figures are its own)",
        }

    def page(self, receipt: Receipt, case_id: str | None, page: int) -> dict[str, Any]:
        """One page (1-based) of a case's timeline summary, or PipelineUnavailable."""
        cycle = self.case(receipt, case_id)
        pages = self.pages(receipt, cycle)
        if page < 1 or page > len(pages):
            raise PipelineUnavailable(
                f"page {page} is out of range: {cycle.case_id} has {len(pages)} page(s), 1.."
                f"{len(pages)}"
            )
        return {
            **pages[page - 1],
            "page": page,
            "pages": len(pages),
            "next_page": page + 1 if page < len(pages) else None,
        }
