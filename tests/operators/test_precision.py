"""The CANN-style precision check reports ratios, errors and indices correctly."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np

from justkernel.operators import (
    InputPack,
    OperatorDefinition,
    check_case_outputs,
    compare_output,
)
from justkernel.operators.precision import compare_output_files


def test_crafted_failures_are_reported(definition: OperatorDefinition) -> None:
    f32 = definition.precision_for("float32")
    golden = np.linspace(1.0, 2.0, 20_000, dtype=np.float32)
    out = golden.copy()
    out[[3, 70, 900, 901, 15_000, 19_999]] += np.float32(0.01)
    out[42] = golden[42] * np.float32(1 + 5e-5)  # within rtol: not a failure
    result = compare_output("output0", out, golden, f32)
    assert result.failures == 6
    assert result.allowed_failures == 2
    assert not result.passed
    assert math.isclose(result.error_ratio, 6 / 20_000)
    assert result.first_failures == (3, 70, 900, 901, 15_000)
    assert math.isclose(result.max_abs_error, 0.01, rel_tol=1e-3)
    assert math.isclose(result.max_rel_error, 0.01 / float(golden[3]), rel_tol=1e-3)
    assert result.nan_count == 0


def test_ratio_allowance_only_for_large_outputs(definition: OperatorDefinition) -> None:
    f32 = definition.precision_for("float32")
    big = np.ones(20_000, dtype=np.float32)
    two_bad = big.copy()
    two_bad[[5, 6]] = 2.0
    assert compare_output("o", two_bad, big, f32).passed  # 2 <= 1e-4 * 20000
    small = np.ones(9_999, dtype=np.float32)
    one_bad = small.copy()
    one_bad[0] = 2.0
    assert not compare_output("o", one_bad, small, f32).passed  # under 10,000: zero allowed


def test_tolerance_edges(definition: OperatorDefinition) -> None:
    f32 = definition.precision_for("float32")
    golden = np.array([0.0, 100.0, 100.0], dtype=np.float64)
    out = np.array([1e-4 * 0.99, 100.0 + 0.0101 * 0.99, 100.0 + 0.0101 * 1.01])
    result = compare_output("o", out, golden, f32)
    assert result.first_failures == (2,)


def test_nan_fails_and_equal_infinities_match(definition: OperatorDefinition) -> None:
    f16 = definition.precision_for("float16")
    golden = np.array([1.0, np.inf, -np.inf, 3.0], dtype=np.float16)
    out = np.array([np.nan, np.inf, -np.inf, 3.002], dtype=np.float16)
    result = compare_output("o", out, golden, f16)
    assert result.failures == 1 and result.first_failures == (0,) and result.nan_count == 1
    assert result.to_dict()["first_failures"] == [0]
    inf_out = np.array([1.0, np.inf, np.inf, 3.0], dtype=np.float16)
    flipped = compare_output("o", inf_out, golden, f16)
    assert flipped.first_failures == (2,)
    assert flipped.to_dict()["max_abs_error"] is None  # inf shown as missing, never as 0


def _reference(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> tuple:
    """The check's definition over every element in float64, without the exact-match shortcut."""
    o, r = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(o - r)
        fails = ~((np.isfinite(d) & (d <= atol + rtol * np.abs(r))) | (o == r))
        nz = (r != 0) & ~np.isnan(d)
        rel = d[nz] / np.abs(r[nz])
    fd = d[~np.isnan(d)]
    return (
        tuple(int(i) for i in np.flatnonzero(fails)[:5]),
        int(fails.sum()),
        float(fd.max()) if fd.size else 0.0,
        float(rel.max()) if rel.size else 0.0,
        int(np.isnan(o).sum()),
    )


def test_exact_match_shortcut_changes_no_figure(definition: OperatorDefinition) -> None:
    """Mostly exact outputs with NaN, infinities, signed zeros and near misses: the figures
    equal the plain float64 definition's, in both dtypes."""
    rng = np.random.default_rng(7)
    for dtype in ("float32", "float16"):
        standard = definition.precision_for(dtype)
        golden = rng.standard_normal(50_000).astype(dtype)
        golden[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0]
        out = golden.copy()
        out[2] = np.nan  # NaN where the golden is NaN still fails
        out[3] = -0.0
        pick = rng.choice(50_000, 40, replace=False)
        out[pick] += rng.uniform(-0.02, 0.02, 40).astype(dtype)
        out[7], out[8] = np.inf, -golden[8]
        got = compare_output("o", out, golden, standard)
        want = _reference(out, golden, standard.atol, standard.rtol)
        assert (
            got.first_failures,
            got.failures,
            got.max_abs_error,
            got.max_rel_error,
            got.nan_count,
        ) == want, dtype
        assert got.failures > 0 and got.nan_count == 1


def test_shape_mismatch_fails(definition: OperatorDefinition) -> None:
    f32 = definition.precision_for("float32")
    result = compare_output("o", np.zeros(3), np.zeros(4), f32)
    assert not result.passed and "shape" in result.message


def test_output_folder_checks(
    local_pack: InputPack, definition: OperatorDefinition, tmp_path: Path
) -> None:
    case_id = "c15_small_bcast_f32"
    golden_dir = local_pack.golden_dir(case_id)
    (tmp_path / "output0.bin").write_bytes((golden_dir / "output0.bin").read_bytes())
    missing = check_case_outputs(local_pack, case_id, tmp_path, definition)
    assert not missing.passed
    assert [o.passed for o in missing.outputs] == [True, False]
    assert "not written" in missing.message
    (tmp_path / "output1.bin").write_bytes(b"\0" * 4)
    short = check_case_outputs(local_pack, case_id, tmp_path, definition)
    assert not short.passed and "bytes" in short.outputs[1].message
    out1 = local_pack.load_golden(case_id)[1].copy()
    out1.ravel()[3] = np.float32(np.nan)
    out1.astype("<f4").tofile(tmp_path / "output1.bin")
    one_nan = check_case_outputs(local_pack, case_id, tmp_path, definition)
    assert one_nan.outputs[1].first_failures == (3,)
    assert one_nan.outputs[1].nan_count == 1


def test_a_chunked_check_gives_the_whole_check_figures(definition: OperatorDefinition) -> None:
    """Counts, maxima and first failing indices do not depend on the chunk size, also when
    failures, NaNs and infinities straddle chunk edges, and files give what arrays give."""
    rng = np.random.default_rng(11)
    standard = definition.precision_for("float32")
    golden = rng.standard_normal(10_007).astype(np.float32)
    golden[[0, 5, 6]] = [np.inf, np.nan, 0.0]
    out = golden.copy()
    out[rng.choice(10_007, 30, replace=False)] += np.float32(0.5)
    out[[6, 999, 1000, 10_006]] = [np.nan, np.inf, -np.inf, 3.0]
    whole = compare_output("o", out, golden, standard, chunk=1 << 20)
    assert whole.failures > 30 and whole.nan_count == 2
    for chunk in (1, 7, 1000, 4096):
        assert compare_output("o", out, golden, standard, chunk=chunk) == whole, chunk


def test_a_large_wrong_output_is_checked_in_bounded_memory(
    definition: OperatorDefinition, tmp_path: Path
) -> None:
    """A wrong 4M-element output (a perf case's size) is checked a chunk at a time: the lab
    process holds a few MB for it, not float64 copies of the whole output and golden."""
    standard = definition.precision_for("float32")
    shape = (2048, 2048)
    golden, out = tmp_path / "golden.bin", tmp_path / "out.bin"
    np.ones(shape, dtype="<f4").tofile(golden)
    np.full(shape, 2.0, dtype="<f4").tofile(out)
    tracemalloc.start()
    try:
        result = compare_output_files("output0", out, golden, "float32", shape, standard)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not result.passed and result.failures == 2048 * 2048
    assert result.first_failures == (0, 1, 2, 3, 4) and result.max_abs_error == 1.0
    assert peak < 48 << 20, f"{peak >> 20} MB"  # whole-array float64 work: ~360 MB
