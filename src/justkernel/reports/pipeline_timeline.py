"""A receipt's pipeline view: the per-case figures it holds and a compact per-core, per-pipe
timeline built from its trace blob (Chrome trace-event JSON written by the ascendc-cpu
harness: one process per AI Core, one thread per pipe, `X` events).

A baseline trace holds tens of thousands of events (11 MB of JSON); a browser or an inline SVG
needs far fewer shapes than that. So each lane's busy intervals are merged (union) and, when
more than `max_segments` remain, folded into at most `max_segments` equal time buckets, each
drawn as one segment with the busy cycles inside it (its shade). Busy totals stay exact either
way: they are sums of the union, never of the drawn shapes. Pure functions over parsed JSON, so
the dashboard and the report draw the same thing.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from typing import Any

MAX_SEGMENTS = 1500
PIPE_ORDER = ("MTE2", "V", "MTE3", "S")  # msprof's simulator chart: loads, compute, stores, scalar
TRACE_SUFFIX = ".trace.json.gz"  # the blob name the ascendc-cpu toolchain gives a case's trace


class NotATrace(ValueError):
    """The blob is not a Chrome trace of the ascendc-cpu harness."""


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


def load_trace(blob: bytes) -> Any:
    """A stored trace blob back as JSON (gzip, as `toolchains.ascendc_cpu.run` keeps it)."""
    try:
        return json.loads(gzip.decompress(blob))
    except (OSError, EOFError, ValueError) as exc:
        raise NotATrace(f"not a gzip-compressed JSON trace ({exc})") from None


def _events(trace: Any) -> list[Any]:
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise NotATrace("no traceEvents list")
    return events


def _clock_mhz(trace: Any) -> float | None:
    other = trace.get("otherData") if isinstance(trace, dict) else None
    clock = other.get("clock_mhz") if isinstance(other, dict) else None
    return float(clock) if isinstance(clock, int | float) and clock > 0 else None


def _span(event: dict[str, Any], clock: float | None) -> tuple[int, int] | None:
    """(start, end) in cycles: the harness's exact `args.start_cycle`/`args.cycles`, else
    `ts`/`dur` (µs) times the SoC clock."""
    args = event.get("args")
    if isinstance(args, dict):
        start, cycles = args.get("start_cycle"), args.get("cycles")
        if isinstance(start, int) and isinstance(cycles, int) and cycles >= 0:
            return start, start + cycles
    ts, dur = event.get("ts"), event.get("dur")
    if clock is None or not isinstance(ts, int | float) or not isinstance(dur, int | float):
        return None
    start = round(ts * clock)
    return start, start + max(0, round(dur * clock))


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


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


def _order(pipe: str) -> tuple[int, str]:
    return (PIPE_ORDER.index(pipe) if pipe in PIPE_ORDER else len(PIPE_ORDER), pipe)


def build_timeline(trace: Any, max_segments: int = MAX_SEGMENTS) -> dict[str, Any]:
    """Per core (process), per pipe lane (thread): busy cycles, trace events,
    utilisation (busy / that core's makespan) and at most `max_segments` segments as a flat
    list [start, end, busy, ...] in cycles. `downsampled` says a lane's segments are buckets
    (`bucket_cycles` wide, shaded by busy / width), not the exact intervals."""
    if max_segments < 1:
        raise ValueError("max_segments must be at least 1")
    events = _events(trace)
    clock = _clock_mhz(trace)
    cores: dict[int, str] = {}
    pipes: dict[tuple[int, int], str] = {}
    spans: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for event in events:
        if not isinstance(event, dict):
            continue
        pid, tid, ph = event.get("pid"), event.get("tid"), event.get("ph")
        if not isinstance(pid, int) or not isinstance(tid, int):
            continue
        if ph == "M":
            name = (event.get("args") or {}).get("name")
            if event.get("name") == "process_name" and isinstance(name, str):
                cores[pid] = name
            elif event.get("name") == "thread_name" and isinstance(name, str):
                pipes[(pid, tid)] = name
        elif ph == "X":
            span = _span(event, clock)
            if span is not None:
                spans[(pid, tid)].append(span)
                counts[(pid, tid)] += 1
    lanes = {key: _union(found) for key, found in spans.items()}
    total = max((m[-1][1] for m in lanes.values() if m), default=0)
    width = max(1, -(-total // max_segments))
    downsampled = False
    by_core: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for (pid, tid), merged in lanes.items():
        exact = len(merged) <= max_segments
        downsampled |= not exact
        flat = [x for s, e in merged for x in (s, e, e - s)] if exact else _buckets(merged, width)
        by_core[pid].append(
            {
                "pipe": pipes.get((pid, tid), f"thread {tid}"),
                "busy": sum(e - s for s, e in merged),
                "events": counts[(pid, tid)],
                "intervals": len(merged),
                "downsampled": not exact,
                "segments": flat,
            }
        )
    out_cores = []
    for pid in sorted(set(by_core) | set(cores)):
        core_lanes = sorted(by_core.get(pid, []), key=lambda lane: _order(lane["pipe"]))
        makespan = max((m[-1][1] for (p, _t), m in lanes.items() if p == pid and m), default=0)
        for lane in core_lanes:
            lane["utilisation"] = round(lane["busy"] / makespan, 6) if makespan else None
        name = cores.get(pid, f"core {pid}")
        out_cores.append({"core": pid, "name": name, "makespan": makespan, "lanes": core_lanes})
    return {
        "total": total,
        "unit": "cycles",
        "clock_mhz": clock,
        "max_segments": max_segments,
        "downsampled": downsampled,
        "bucket_cycles": width if downsampled else None,
        "events": sum(counts.values()),
        "cores": out_cores,
    }
