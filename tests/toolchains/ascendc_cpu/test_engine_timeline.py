"""The engine's cycle model on known sequences (engine_cases/cases.cpp, test SoC).

Test SoC figures: MTE2 and MTE3 cost 100 + bytes/32 cycles, a vector op 10 + 2 per 256-byte
repeat, scalar issue free. A tile is 1024 floats (4096 bytes): IN = OUT = 228, V = 42; a core
runs 4 tiles of CopyIn -> Compute -> CopyOut through VECIN/VECOUT queues.

- Single buffering: the next CopyIn waits for the only input buffer to be freed by Compute, and
  Compute waits for the output buffer CopyOut frees; with IN = OUT the period is IN + V:
  makespan = tiles * (IN + V) + OUT.
- Double buffering (two buffers per queue): MTE2 runs back to back while V and MTE3 follow:
  makespan = tiles * IN + V + OUT (MTE2-bound).
"""

from __future__ import annotations

import pytest

from tests.toolchains.ascendc_cpu.engine_support import run_case

pytestmark = pytest.mark.timeout(120)

IN = OUT = 100 + 4096 // 32
V = 10 + (4096 // 256) * 2
TILES = 4


def test_single_buffering_follows_the_formula() -> None:
    r = run_case("single_buffer")
    assert r["total"] == TILES * (IN + V) + OUT == 1308
    busy = r["cores"][0]["busy"]
    assert (busy["MTE2"], busy["V"], busy["MTE3"]) == (TILES * IN, TILES * V, TILES * OUT)


def test_double_buffering_overlaps_mte2_with_v() -> None:
    single, double = run_case("single_buffer"), run_case("double_buffer")
    assert double["total"] == TILES * IN + V + OUT == 1182
    assert double["total"] < single["total"]
    assert double["bound"] == "MTE2"
    # the same work either way: only the overlap differs
    assert (
        double["ops"]
        == single["ops"]
        == [
            {"op": "DataCopy", "pipe": "MTE2", "calls": TILES, "cycles": TILES * IN},
            {"op": "TestScale", "pipe": "V", "calls": TILES, "cycles": TILES * V},
            {"op": "DataCopy", "pipe": "MTE3", "calls": TILES, "cycles": TILES * OUT},
        ]
    )
    assert double["trace_events"] == 3 * TILES


def test_cores_have_their_own_timelines() -> None:
    r = run_case("two_cores")
    half = TILES // 2
    assert [c["makespan"] for c in r["cores"]] == [half * IN + V + OUT] * 2
    assert r["total"] == half * IN + V + OUT


def test_flags_order_pipes_and_pipe_all_holds_the_scalar() -> None:
    # MTE2 -> SetFlag/WaitFlag -> V -> SetFlag/WaitFlag -> MTE3, PipeBarrier<PIPE_ALL>, then two
    # scalar UB accesses of 3 cycles each start after everything
    assert run_case("flags_clean")["total"] == IN + V + OUT + 2 * 3


def test_sync_all_releases_every_core_at_the_latest_arrival() -> None:
    # core b moves b+1 tiles before SyncAll and one after: side by side, core 0 waits for core 1
    seq = run_case("sync_all_timing")
    assert [c["makespan"] for c in seq["cores"]] == [2 * IN, 3 * IN]
    side = run_case("sync_all_timing", "--threads")
    assert [c["makespan"] for c in side["cores"]] == [3 * IN, 3 * IN]
    # without SyncAll, side by side is the same as one after another
    assert run_case("two_cores", "--threads") == run_case("two_cores")


@pytest.mark.parametrize(
    "args",
    [
        ("double_buffer",),
        ("pipeline_hazard",),
        ("cross_core_race",),
        ("sync_all_reduce", "--threads"),
    ],
)
def test_the_same_program_gives_the_same_numbers(args: tuple[str, ...]) -> None:
    assert run_case(*args) == run_case(*args)


def test_scalar_issue_is_busy_time_on_the_s_lane() -> None:
    # one issue cycle per API call: 11 calls a tile (AllocTensor, DataCopy, EnQue, DeQue,
    # AllocTensor, TestScale, EnQue, FreeTensor, DeQue, DataCopy, FreeTensor); the first copy
    # starts after two of them, the rest of the scalar work hides under MTE2
    r = run_case("double_buffer", "--issue=1")
    calls = 11 * TILES
    assert r["total"] == 2 + TILES * IN + V + OUT
    busy = r["cores"][0]["busy"]
    assert busy["S"] == calls
    assert r["ops"][0] == {"op": "issue", "pipe": "S", "calls": calls, "cycles": calls}
    # the trace accounts for every busy cycle, and no lane overlaps itself
    for pipe, (traced, overlaps) in r["trace"][0].items():
        assert (traced, overlaps) == (busy[pipe], False), pipe
