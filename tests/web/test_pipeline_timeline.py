"""The pure timeline builder behind the pipeline view and the report, on traces in the
harness's format with several cores: lanes merged as a union, at most N segments per lane with
the busy cycles kept exact, `ts`/`dur` read at the SoC clock when exact cycles are absent, and
the report's SVG drawing every lane. (The real toolchain's trace: test_pipeline_view.py.)"""

from __future__ import annotations

import gzip
import json

import pytest

from justkernel.core.pipeline_trace import NotATrace, load_trace
from justkernel.reports.pipeline_svg import pipeline_svg
from justkernel.reports.pipeline_timeline import build_timeline

PIPES = ("S", "V", "MTE2", "MTE3")


def _trace(cores: int, per_lane: int) -> dict[str, object]:
    events: list[dict[str, object]] = []
    for core in range(cores):
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": core,
                "args": {"name": f"core {core}"},
                "tid": 0,
            }
        )
        for tid, pipe in enumerate(PIPES):
            events.append(
                {"ph": "M", "name": "thread_name", "pid": core, "tid": tid, "args": {"name": pipe}}
            )
            for i in range(per_lane):
                start = i * 10 + core  # 6 busy of every 10 cycles, shifted per core
                events.append(
                    {
                        "ph": "X",
                        "name": "op",
                        "pid": core,
                        "tid": tid,
                        "ts": 0,
                        "dur": 0,
                        "args": {"cycles": 6, "start_cycle": start},
                    }
                )
    return {"traceEvents": events, "otherData": {"clock_mhz": 1000.0}}


def test_lanes_are_unions_downsampled_to_the_limit_with_exact_busy_cycles() -> None:
    trace = _trace(cores=3, per_lane=500)
    # overlapping and touching intervals on core 0's S lane merge into one
    trace["traceEvents"].append(  # type: ignore[union-attr]
        {"ph": "X", "pid": 0, "tid": 0, "args": {"cycles": 4, "start_cycle": 4}}
    )
    exact = build_timeline(trace, max_segments=1000)
    assert not exact["downsampled"] and exact["bucket_cycles"] is None
    assert [c["name"] for c in exact["cores"]] == ["core 0", "core 1", "core 2"]
    lanes = exact["cores"][0]["lanes"]
    assert [lane["pipe"] for lane in lanes] == ["MTE2", "V", "MTE3", "S"]
    s_lane = lanes[3]
    assert s_lane["segments"][:6] == [0, 8, 8, 10, 16, 6]  # [0,6) ∪ [4,8), then [10,16)
    assert s_lane["busy"] == 500 * 6 + 2 and s_lane["events"] == 501
    assert exact["cores"][2]["makespan"] == 499 * 10 + 2 + 6

    small = build_timeline(trace, max_segments=50)
    assert small["downsampled"] and small["bucket_cycles"] == -(-small["total"] // 50)
    for core, full in zip(small["cores"], exact["cores"], strict=True):
        for lane, whole in zip(core["lanes"], full["lanes"], strict=True):
            assert lane["downsampled"] and len(lane["segments"]) // 3 <= 50
            assert sum(lane["segments"][2::3]) == whole["busy"] == lane["busy"]
            assert lane["utilisation"] == pytest.approx(whole["busy"] / core["makespan"])


def test_ts_and_dur_at_the_soc_clock_when_exact_cycles_are_missing() -> None:
    trace = {
        "traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 2, "args": {"name": "MTE2"}},
            {"ph": "X", "pid": 0, "tid": 2, "ts": 1.0, "dur": 0.5},
        ],
        "otherData": {"clock_mhz": 1850.0},
    }
    lane = build_timeline(trace)["cores"][0]["lanes"][0]
    assert lane["segments"] == [1850, 2775, 925]
    with pytest.raises(NotATrace):
        load_trace(b"not gzip")
    with pytest.raises(NotATrace):
        build_timeline({"traceEvents": "x"})
    assert load_trace(gzip.compress(json.dumps(trace).encode())) == trace


def test_the_report_svg_draws_every_lane_of_every_core() -> None:
    timeline = build_timeline(_trace(cores=2, per_lane=40), max_segments=16)
    svg = pipeline_svg(timeline, "MTE2")
    assert svg.startswith("<svg") and "<script" not in svg
    assert svg.count(">core ") == 2 and svg.count(">MTE2<") == 2
    assert svg.count('font-weight="bold">MTE2</text>') == 2  # the bound pipe, per core
    assert svg.count("<rect x=") == sum(
        len(lane["segments"]) // 3 for core in timeline["cores"] for lane in core["lanes"]
    )
