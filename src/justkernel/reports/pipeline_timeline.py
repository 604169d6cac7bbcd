"""A receipt's pipeline view: the per-case figures it holds and a compact per-core, per-pipe
timeline built from its trace blob (Chrome trace-event JSON written by the ascendc-cpu
harness: one process per AI Core, one thread per pipe, `X` events).

A baseline trace holds tens of thousands of events (11 MB of JSON); a browser or an inline SVG
needs far fewer shapes than that. So each lane's busy intervals are merged (union) and, when
more than `max_segments` remain, folded into at most `max_segments` equal time buckets, each
drawn as one segment with the busy cycles inside it (its shade). Busy totals stay exact either
way: they are sums of the union, never of the drawn shapes. Pure functions over parsed JSON, so
the dashboard and the report draw the same thing; reading the trace into lanes is
`core.pipeline_trace`'s, shared with the agents' `read_simulation_results(section="pipeline")`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from justkernel.core.pipeline_trace import TRACE_SUFFIX, read_lanes

MAX_SEGMENTS = 1500


def receipt_cases(receipt: Any) -> dict[str, dict[str, Any]]:
    """Per perf case of a receipt (parsed JSON): its `pipeline` figures and the SHA-256 of its
    trace blob (None when it has none). Cases without pipeline figures are left out."""
    out: dict[str, dict[str, Any]] = {}
    if not isinstance(receipt, dict) or not isinstance(receipt.get("cycles"), list):
        return out
    for cycle in receipt["cycles"]:
        if not isinstance(cycle, dict) or not isinstance(cycle.get("pipeline"), dict):
            continue
        case_id = cycle.get("case_id")
        if not isinstance(case_id, str):
            continue
        trace = None
        for log in cycle.get("logs") or []:
            name = log.get("name") if isinstance(log, dict) else None
            if isinstance(name, str) and name.endswith(TRACE_SUFFIX):
                trace = log.get("sha256") if isinstance(log.get("sha256"), str) else None
        out[case_id] = {
            "case_id": case_id,
            "est_cycles": cycle.get("est_cycles"),
            "pipeline": cycle["pipeline"],
            "trace_sha256": trace,
        }
    return out


def _buckets(merged: list[tuple[int, int]], width: int) -> list[int]:
    """Busy cycles per bucket of `width` cycles, as flat [start, end, busy, ...] over the
    buckets that hold any: at most total / width segments."""
    busy: dict[int, int] = defaultdict(int)
    for start, end in merged:
        index = start // width
        while start < end:
            edge = min(end, (index + 1) * width)
            busy[index] += edge - start
            start, index = edge, index + 1
    flat: list[int] = []
    for index in sorted(busy):
        flat += [index * width, (index + 1) * width, busy[index]]
    return flat


def build_timeline(trace: Any, max_segments: int = MAX_SEGMENTS) -> dict[str, Any]:
    """Per core (process), per pipe lane (thread): busy cycles, trace events,
    utilisation (busy / that core's makespan) and at most `max_segments` segments as a flat
    list [start, end, busy, ...] in cycles. `downsampled` says a lane's segments are buckets
    (`bucket_cycles` wide, shaded by busy / width), not the exact intervals."""
    if max_segments < 1:
        raise ValueError("max_segments must be at least 1")
    read = read_lanes(trace)
    total = read.total
    width = max(1, -(-total // max_segments))
    downsampled = False
    by_core: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for lane in read.lanes:  # sorted by core, then pipe order
        merged = lane.merged
        exact = len(merged) <= max_segments
        downsampled |= not exact
        flat = [x for s, e in merged for x in (s, e, e - s)] if exact else _buckets(merged, width)
        by_core[lane.core].append(
            {
                "pipe": lane.pipe,
                "busy": lane.busy,
                "events": lane.events,
                "intervals": len(merged),
                "downsampled": not exact,
                "segments": flat,
            }
        )
    out_cores = []
    for pid in read.cores():
        core_lanes = by_core.get(pid, [])
        makespan = read.makespan(pid)
        for lane in core_lanes:
            lane["utilisation"] = round(lane["busy"] / makespan, 6) if makespan else None
        name = read.core_names.get(pid, f"core {pid}")
        out_cores.append({"core": pid, "name": name, "makespan": makespan, "lanes": core_lanes})
    return {
        "total": total,
        "unit": "cycles",
        "clock_mhz": read.clock_mhz,
        "max_segments": max_segments,
        "downsampled": downsampled,
        "bucket_cycles": width if downsampled else None,
        "events": sum(lane.events for lane in read.lanes),
        "cores": out_cores,
    }
