"""Reading an ascendc-cpu trace blob into lanes: the one parser the dashboard, the report and
the agents' tools share (it sits in `core` so that all of them may import it).

The harness writes Chrome trace-event JSON: one process per AI Core, one thread per pipe,
`M` events naming them and one `X` event per instruction (`name` = the API, `args.start_cycle`
and `args.cycles` exact, `args.site` = file:line, `ts`/`dur` in µs at the SoC clock). A lane is
one (core, pipe): its busy intervals merged (their union, so overlapping instructions on a
pipe count once), its event count and, per instruction name, calls, cycles and the costliest
source line. Pure functions over parsed JSON; no I/O but `load_trace` on bytes given.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

PIPE_ORDER = ("MTE2", "V", "MTE3", "S")  # msprof's simulator chart: loads, compute, stores, scalar
TRACE_SUFFIX = ".trace.json.gz"  # the blob name the ascendc-cpu toolchain gives a case's trace


class NotATrace(ValueError):
    """The blob is not a Chrome trace of the ascendc-cpu harness."""


@dataclass
class OpStats:
    """One instruction name on one lane: how often, how many cycles, where it cost most."""

    calls: int = 0
    cycles: int = 0
    sites: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def top_site(self) -> str | None:
        return max(self.sites, key=lambda s: self.sites[s]) if self.sites else None


@dataclass
class Lane:
    core: int
    tid: int
    pipe: str
    merged: list[tuple[int, int]]
    events: int
    ops: dict[str, OpStats]

    @property
    def busy(self) -> int:
        return sum(e - s for s, e in self.merged)


@dataclass
class TraceLanes:
    """Every lane of a trace, the core names, and the clock the µs fields assume."""

    lanes: list[Lane]
    core_names: dict[int, str]
    clock_mhz: float | None

    def makespan(self, core: int) -> int:
        return max(
            (ln.merged[-1][1] for ln in self.lanes if ln.core == core and ln.merged), default=0
        )

    @property
    def total(self) -> int:
        return max((ln.merged[-1][1] for ln in self.lanes if ln.merged), default=0)

    def cores(self) -> list[int]:
        return sorted({ln.core for ln in self.lanes} | set(self.core_names))


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


def union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint intervals covering the same cycles (empty spans dropped)."""
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


def pipe_rank(pipe: str) -> tuple[int, str]:
    """Sort key: the chart's pipe order, unknown pipes after it by name."""
    return (PIPE_ORDER.index(pipe) if pipe in PIPE_ORDER else len(PIPE_ORDER), pipe)


def read_lanes(trace: Any) -> TraceLanes:
    """The trace's lanes, sorted by core then pipe order (NotATrace when it has no event list)."""
    events = _events(trace)
    clock = _clock_mhz(trace)
    cores: dict[int, str] = {}
    pipes: dict[tuple[int, int], str] = {}
    spans: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    ops: dict[tuple[int, int], dict[str, OpStats]] = defaultdict(dict)
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
            if span is None:
                continue
            spans[(pid, tid)].append(span)
            op_name = event.get("name") if isinstance(event.get("name"), str) else "?"
            stats = ops[(pid, tid)].setdefault(op_name, OpStats())
            stats.calls += 1
            stats.cycles += span[1] - span[0]
            site = (event.get("args") or {}).get("site")
            if isinstance(site, str):
                stats.sites[site] += span[1] - span[0]
    lanes = [
        Lane(
            pid,
            tid,
            pipes.get((pid, tid), f"thread {tid}"),
            union(found),
            len(found),
            ops[(pid, tid)],
        )
        for (pid, tid), found in spans.items()
    ]
    lanes.sort(key=lambda ln: (ln.core, pipe_rank(ln.pipe)))
    return TraceLanes(lanes, cores, clock)
