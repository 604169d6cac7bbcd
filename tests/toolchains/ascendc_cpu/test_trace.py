"""The trace a perf run stores as a receipt blob loads in a trace viewer: Chrome trace-event
JSON (the format msprof's simulator trace.json and Perfetto use), one process per AI Core, one
thread (lane) per pipe, complete events that never overlap on a lane and add up to the busy
cycles the receipt reports."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import pytest

from justkernel.core.pipeline_trace import TRACE_SUFFIX, load_trace
from justkernel.core.receipts import CycleResult, Status
from tests.toolchains.ascendc_cpu.ladder_support import PERF_CASES, Ran, ladder

pytestmark = pytest.mark.timeout(300)
LANES = {"MTE2", "V", "MTE3", "S"}


def check_trace_events(doc: Any) -> tuple[dict[tuple[int, int], str], list[dict[str, Any]]]:
    """Schema check of the trace-event format; returns the lane names and the complete events."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)
    lanes: dict[tuple[int, int], str] = {}
    complete = []
    for e in doc["traceEvents"]:
        assert isinstance(e, dict) and e.get("ph") in {"X", "M"}, e
        assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), e
        assert isinstance(e.get("name"), str) and e["name"], e
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                assert isinstance(e.get("args", {}).get("name"), str), e
                assert (e["pid"], e["tid"]) not in lanes, f"lane named twice: {e}"
                lanes[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        for key in ("ts", "dur"):
            assert isinstance(e.get(key), int | float) and e[key] >= 0, e
        args = e.get("args")
        assert isinstance(args, dict) and isinstance(args.get("cycles"), int), e
        assert isinstance(args.get("start_cycle"), int), e
        assert isinstance(args.get("site"), str) and args["site"], e
        complete.append(e)
    return lanes, complete


def lanes_and_events(ran: Ran, case: CycleResult) -> tuple[dict, list[dict[str, Any]]]:
    refs = [ref for ref in case.logs if ref.name == f"{case.case_id}{TRACE_SUFFIX}"]
    assert len(refs) == 1 and not refs[0].truncated, case.case_id
    return check_trace_events(load_trace(ran.blob(refs[0].sha256)))


def lane_cycles(lanes: dict, events: list[dict[str, Any]], core: int) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for e in events:
        if e["pid"] == core:
            total[lanes[(e["pid"], e["tid"])]] += e["args"]["cycles"]
    return total


async def test_each_perf_trace_is_valid_trace_event_json_with_a_lane_per_pipe_per_core() -> None:
    ran = (await ladder("best"))["best"]
    assert ran.receipt.status is Status.MEASURED, ran.receipt.detail
    assert [c.case_id for c in ran.receipt.cycles] == list(PERF_CASES)
    for c in ran.receipt.cycles:
        assert c.pipeline is not None and not c.pipeline.trace_truncated, c.case_id
        lanes, events = lanes_and_events(ran, c)
        # one process per core, one named lane per pipe in each, every event on a named lane
        pids = {pid for pid, _ in lanes}
        assert len(pids) == c.pipeline.block_dim, (c.case_id, pids)
        for pid in pids:
            names = [name for (p, _), name in lanes.items() if p == pid]
            assert len(names) == len(set(names)) and set(names) >= LANES, (pid, names)
        assert events and all((e["pid"], e["tid"]) in lanes for e in events)
        # copies in, vector instructions, copies out, and the scalar issuing them all
        assert {lanes[(e["pid"], e["tid"])] for e in events} >= LANES, c.case_id
        # each pipe runs in order: no two events of one lane overlap (exact, in cycles; ts and
        # dur are the same figures in microseconds at the SoC clock, so they grow together)
        by_lane: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
        for e in events:
            by_lane[(e["pid"], e["tid"])].append(e)
        for lane, evs in by_lane.items():
            evs.sort(key=lambda e: e["args"]["start_cycle"])
            for a, b in itertools.pairwise(evs):
                end = a["args"]["start_cycle"] + a["args"]["cycles"]
                assert b["args"]["start_cycle"] >= end, (c.case_id, lanes[lane], a, b)
                assert b["ts"] >= a["ts"], (c.case_id, lanes[lane], a, b)
        # the slowest core's lanes add up to the busy cycles of the receipt's per-pipe table
        slowest = max(c.pipeline.cores, key=lambda m: m.makespan)
        traced = lane_cycles(lanes, events, slowest.block)
        for pipe in LANES:
            assert traced[pipe] == c.pipeline.pipes[pipe].busy, (c.case_id, pipe, traced)


async def test_the_scalar_rung_shows_its_element_loops_on_the_s_lane() -> None:
    ran = (await ladder("scalar_loops"))["scalar_loops"]
    assert ran.receipt.status is Status.MEASURED, ran.receipt.detail
    c = ran.receipt.cycles[0]
    assert c.pipeline is not None and c.pipeline.bound_pipe == "S", c.pipeline
    lanes, events = lanes_and_events(ran, c)
    on_s = [e for e in events if lanes[(e["pid"], e["tid"])] == "S"]
    assert on_s and {e["name"] for e in on_s} >= {"GetValue", "SetValue"}, on_s[:3]
