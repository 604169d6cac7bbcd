"""The engine's misuse checks, each on a small kernel of its own (engine_cases/cases.cpp).

Each check must fire with its fixed name AND point at the kernel's line (the caller), not at
the library header that noticed it; a clean kernel must report nothing; a kernel that catches
every exception cannot hide its first misuse; turning hazard checks off is what lets a racy
kernel "pass" on a plain CPU run, since its outputs are right there.
"""

from __future__ import annotations

import pytest

from tests.toolchains.ascendc_cpu.engine_support import CASES_SRC, marked_site, run_case

pytestmark = pytest.mark.timeout(120)

N = 4096
X = [float(i % 97) for i in range(N)]  # the input the cases program registers


def untouched(n: int) -> float:
    """Sum of the output elements the kernel does not write (pre-filled with -1)."""
    return -1.0 * (N - n)


# case -> the C++ function holding its marked line (the case's own name unless shared)
SHARED_FUNCTION = {"gm_hazard": "gm_round_trip", "scalar_hazard": "scalar_after_vector"}
MISUSE_CASES = (
    "ub_overflow",
    "ub_out_of_bounds",
    "wrapped_offset",
    "ub_misaligned",
    "datacopy_misaligned",
    "queue_empty_deque",
    "queue_alloc_past_depth",
    "queue_use_after_free",
    "queue_foreign_tensor",
    "gm_out_of_bounds",
    "gm_write_readonly",
    "ub_uninitialised_read",
    "pipeline_hazard",
    "pipeline_hazard_out",
    "wait_without_set",
    "cross_core_race",
    "pad_tail_poison",  # DataCopyPad without isPad leaves the 32-byte tail garbage
    "params_out_of_range",
    "gm_hazard",  # MTE3 writes GM, MTE2 reads it back, no MTE3_MTE2
    "scalar_hazard",  # V writes UB, S reads it, no V_S
    "sync_all_exchange",  # cores one after another cannot pass data back across SyncAll: said
    "pipe_reset_kills_tensors",
    "pipe_barrier_s",  # a hardware error per the docs
    "nine_vecin_tensors",  # more tensors alive at one position than Atlas A2 allows
    "rounded_buffer",  # InitBuffer rounds to 32 bytes: the bound is the rounded buffer
)


@pytest.mark.parametrize("case", MISUSE_CASES)
def test_misuse_names_its_check_and_the_callers_line(case: str) -> None:
    check, line = marked_site(SHARED_FUNCTION.get(case, case))
    m = run_case(case)["misuse"]
    assert m is not None, case
    assert (m["check"], m["file"], m["line"]) == (check, CASES_SRC, line), m


def test_messages_say_what_was_wrong() -> None:
    overflow = run_case("ub_overflow")["misuse"]["message"]
    assert "65537 bytes" in overflow and "196608-byte" in overflow and "test-soc" in overflow
    assert "DataCopyPad" in run_case("datacopy_misaligned")["misuse"]["message"]
    # a hazard names both sites: the reader here, the writer on the line before
    _, line = marked_site("pipeline_hazard")
    hazard = run_case("pipeline_hazard")["misuse"]["message"]
    assert hazard.startswith("V (TestScale) reads UB")
    assert f"MTE2 (DataCopy) wrote at {CASES_SRC}:{line - 1}" in hazard
    race = run_case("cross_core_race")["misuse"]
    assert race["block"] == 1 and "core 0" in race["message"]


@pytest.mark.parametrize(
    ("case", "ysum", "zsum"),
    [
        ("single_buffer", 2 * sum(X), untouched(0)),
        ("double_buffer", 2 * sum(X), untouched(0)),
        ("two_cores", 2 * sum(X), untouched(0)),
        ("flags_clean", 2 * sum(X[:1024]) + untouched(1024), untouched(0)),
        ("pad_clean", 3 * sum(X[:100]) + untouched(100), untouched(0)),
        # three cores write 10 floats each, neighbours sharing a 32-byte block but no byte
        ("cross_core_clean", untouched(0), 3 * sum(range(10)) + untouched(30)),
        # 4 bursts of 16 floats every 32 floats, gathered and scattered back
        (
            "params_strided",
            2 * sum(X[i] for i in range(128) if i % 32 < 16) + untouched(64),
            untouched(0),
        ),
        ("gm_round_trip", sum(range(1024)) + untouched(1024), untouched(0)),
        ("scalar_after_vector", untouched(0), untouched(0)),
        ("sync_all_forward", untouched(0), 2 * sum(range(8)) + untouched(16)),
    ],
)
def test_clean_kernel_reports_no_misuse_and_computes(case: str, ysum: float, zsum: float) -> None:
    r = run_case(case)
    assert r["misuse"] is None, r["misuse"]
    assert (r["ysum"], r["zsum"]) == (ysum, zsum)


def test_catching_everything_does_not_hide_the_first_misuse() -> None:
    r = run_case("catch_all_hides_nothing")
    check, line = marked_site("catch_all_hides_nothing")
    assert (r["misuse"]["check"], r["misuse"]["line"]) == (check, line)
    # the kernel went on after its catch(...) and finished its work
    assert r["ysum"] == 3 * sum(X[:100]) + untouched(100)


def test_without_hazard_checks_the_racy_kernel_passes_on_a_cpu() -> None:
    r = run_case("pipeline_hazard", "--no-hazard-checks")
    assert r["misuse"] is None
    assert r["ysum"] == 2 * sum(X[:1024]) + untouched(1024)
    # other checks stay on
    assert run_case("ub_overflow", "--no-hazard-checks")["misuse"]["check"] == "ub_overflow"


def test_side_by_side_cores_pass_data_across_sync_all() -> None:
    # core b writes k*(b+1) for k < 8, SyncAll, core 0 sums all three cores' values into y
    assert run_case("sync_all_reduce")["misuse"]["check"] == "unsupported_argument"
    r = run_case("sync_all_reduce", "--threads")
    assert r["misuse"] is None
    assert r["y"] == [6.0 * k for k in range(8)]
    assert run_case("sync_all_exchange", "--threads")["misuse"] is None


def test_side_by_side_cores_still_report_races_and_misuse() -> None:
    check, line = marked_site("cross_core_race")
    m = run_case("cross_core_race", "--threads")["misuse"]
    assert (m["check"], m["line"], m["block"]) == (check, line, 1)
    assert run_case("ub_overflow", "--threads")["misuse"]["check"] == "ub_overflow"
