"""Element-wise vector APIs of the ascendc-cpu library against numpy references.

Claims: count and mask/repeat forms compute IEEE results (half = one rounding of the float
result), the mask/stride engine touches exactly the documented elements (atlasascendc_api_07_0047),
a tail touches only the tail, and each call is one V instruction costing startup + repeats * k.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.toolchains.ascendc_cpu.ops_cases.driver import DTYPES, Script, positions, run_ok

RNG = np.random.default_rng(12)
SENTINEL = 7.0


def bits(a: np.ndarray) -> np.ndarray:
    """Bit patterns, so comparisons are exact (and NaN-safe)."""
    return a.view(np.uint16 if a.dtype == np.float16 else np.uint32)


def data(dt: str, n: int, lo: float = -100.0, hi: float = 100.0) -> np.ndarray:
    if dt == "i32":
        return RNG.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    return RNG.uniform(lo, hi, n).astype(DTYPES[dt])


def ref_binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.int32:
        x, y = a.astype(np.int64), b.astype(np.int64)
        r = {"Add": x + y, "Sub": x - y, "Mul": x * y, "Max": np.maximum(x, y)}.get(op)
        r = np.minimum(x, y) if r is None else r
        return (r & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    x, y = a.astype(np.float32), b.astype(np.float32)
    funcs = {
        "Add": np.add,
        "Sub": np.subtract,
        "Mul": np.multiply,
        "Div": np.divide,
        "Max": np.maximum,
        "Min": np.minimum,
    }
    return funcs[op](x, y).astype(a.dtype)


@pytest.mark.parametrize("dt", ["f32", "f16", "i32"])
def test_binary_count_form_matches_numpy_bit_for_bit(dt: str) -> None:
    n = 300  # not a whole number of repeats: exercises the tail mask
    a, b = data(dt, n), data(dt, n)
    if dt != "i32":
        b = RNG.uniform(0.5, 4.0, n).astype(DTYPES[dt]) * np.where(RNG.random(n) < 0.5, -1, 1)
        b = b.astype(DTYPES[dt])
    ops = ["Add", "Sub", "Mul", "Max", "Min"] + ([] if dt == "i32" else ["Div"])
    s = Script().alloc("a", dt, n, a).alloc("b", dt, n, b)
    for op in ops:
        s.alloc(op, dt, n).call("BIN", op, dt, "count", op, "a", "b", n).dump(op, n)
    out = run_ok(s).outputs
    for op in ops:
        want = ref_binary(op, a, b)
        got = out[op]
        if dt == "i32":
            assert np.array_equal(got, want), op
        else:
            assert np.array_equal(bits(got), bits(want)), op


def test_half_arithmetic_rounds_once_to_binary16() -> None:
    # 2049 is not a half; 2048 + 1 must round to even (2048), 2048 + 3 to 2052.
    a = np.array([2048, 2048, 65504, 65504, 1e-7] + [0] * 11, dtype=np.float16)
    b = np.array([1, 3, 8, 32, 1e-7] + [0] * 11, dtype=np.float16)
    s = Script().alloc("a", "f16", 16, a).alloc("b", "f16", 16, b).alloc("d", "f16", 16)
    out = run_ok(s.call("BIN", "Add", "f16", "count", "d", "a", "b", 16).dump("d", 16)).outputs
    assert out["d"][:4].tolist() == [2048.0, 2052.0, 65504.0, np.inf]  # IEEE overflow
    assert out["d"][4] == np.float16(np.float32(a[4]) + np.float32(b[4]))


def test_tail_of_a_count_form_touches_only_the_tail() -> None:
    n, cap = 70, 96  # 64 + a 6-element tail; elements 70..95 must stay as they were
    a, b = data("f32", n), data("f32", n)
    s = Script().alloc("a", "f32", n, a).alloc("b", "f32", n, b)
    s.alloc("d", "f32", cap, np.full(cap, SENTINEL)).call(
        "BIN", "Mul", "f32", "count", "d", "a", "b", n
    )
    out = run_ok(s.dump("d", cap)).outputs["d"]
    assert np.array_equal(out[:n], a * b)
    assert np.all(out[n:] == SENTINEL)


def test_mask_form_with_default_strides_equals_count_form() -> None:
    n = 256
    a, b = data("f32", n), data("f32", n)
    s = Script().alloc("a", "f32", n, a).alloc("b", "f32", n, b)
    s.alloc("c", "f32", n).alloc("m", "f32", n)
    s.call("BIN", "Sub", "f32", "count", "c", "a", "b", n)
    s.call("BIN", "Sub", "f32", "mask", "m", "a", "b", 64, 4, 1, 1, 1, 8, 8, 8)
    out = run_ok(s.dump("c", n).dump("m", n)).outputs
    assert np.array_equal(out["c"], out["m"])
    assert np.array_equal(out["c"], a - b)


def test_documented_mask_64_example_leaves_the_rest_of_the_repeat() -> None:
    # atlasascendc_api_07_0047: 16-bit Add with mask = 64, repeatTimes = 1, strides {1,1,1,8,8,8}:
    # dst = [2 4 6 ... 128, undefined ...]: only the first 64 of the 128 lanes are written.
    a = np.arange(1, 129, dtype=np.float16)
    s = Script().alloc("a", "f16", 128, a).alloc("d", "f16", 128, np.full(128, SENTINEL))
    s.call("BIN", "Add", "f16", "mask", "d", "a", "a", 64, 1, 1, 1, 1, 8, 8, 8)
    out = run_ok(s.dump("d", 128)).outputs["d"]
    assert np.array_equal(out[:64], np.arange(2, 129, 2, dtype=np.float16))
    assert np.all(out[64:] == SENTINEL)


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_block_and_repeat_strides_pick_the_documented_elements(dt: str) -> None:
    es = 4 if dt == "f32" else 2
    lanes = 256 // es
    mask_lo, mask_hi = 0xF0F0_0000_FFFF_0F0F, (0x8000_0000_0000_0001 if dt == "f16" else 0)
    active = [i for i in range(lanes) if (mask_lo >> i if i < 64 else mask_hi >> (i - 64)) & 1]
    repeats = 2
    # src0: block stride 2, repeat stride 16; src1 contiguous; dst block stride 3, repeat stride 1
    p0 = positions(repeats, active, 2, 16, es)
    p1 = positions(repeats, active, 1, 8, es)
    pd = positions(repeats, active, 3, 1, es)
    size = 2048 // es
    a, b = data(dt, size), data(dt, size)
    s = Script().alloc("a", dt, size, a).alloc("b", dt, size, b)
    s.alloc("d", dt, size, np.full(size, SENTINEL))
    s.call("BIN", "Add", dt, "bits", "d", "a", "b", mask_lo, mask_hi, repeats, 3, 2, 1, 1, 16, 8)
    out = run_ok(s.dump("d", size)).outputs["d"]
    want = np.full(size, SENTINEL, dtype=DTYPES[dt])
    for r in range(repeats):  # repeats run in order: repeat 1 may overwrite repeat 0 (stride 1)
        for k in range(len(active)):
            want[pd[r][k]] = ref_binary(
                "Add", a[p0[r][k] : p0[r][k] + 1], b[p1[r][k] : p1[r][k] + 1]
            )[0]
    assert np.array_equal(bits(out), bits(want))


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_tensor_scalar_and_unary_ops(dt: str) -> None:
    n = 200
    x = data(dt, n, -8.0, 8.0)
    pos = data(dt, n, 0.01, 50.0)
    t = DTYPES[dt]
    sc = t(1.75)
    s = Script().alloc("x", dt, n, x).alloc("p", dt, n, pos)
    for op in ["Adds", "Muls", "Maxs", "Mins"]:
        s.alloc(op, dt, n).call("SC", op, dt, "count", op, "x", float(sc), n).dump(op, n)
    for op, src in [
        ("Abs", "x"),
        ("Relu", "x"),
        ("Exp", "x"),
        ("Ln", "p"),
        ("Sqrt", "p"),
        ("Reciprocal", "p"),
    ]:
        s.alloc(op, dt, n).call("UN", op, dt, "count", op, src, n).dump(op, n)
    out = run_ok(s).outputs
    x32, p32 = x.astype(np.float32), pos.astype(np.float32)
    exact = {
        "Adds": x32 + np.float32(sc),
        "Muls": x32 * np.float32(sc),
        "Maxs": np.maximum(x32, np.float32(sc)),
        "Mins": np.minimum(x32, np.float32(sc)),
        "Abs": np.abs(x32),
        "Relu": np.maximum(x32, np.float32(0)),
        "Sqrt": np.sqrt(p32),
        "Reciprocal": np.float32(1) / p32,
    }
    for op, want in exact.items():
        assert np.array_equal(bits(out[op]), bits(want.astype(t))), op
    # exp/log: the library's libm in float, rounded once; within one unit in the last place.
    for op, want in [("Exp", np.exp(x.astype(np.float64))), ("Ln", np.log(pos.astype(np.float64)))]:
        got = out[op].astype(np.float64)
        ulp = np.spacing(np.abs(want).astype(t)).astype(np.float64)
        assert np.all(np.abs(got - want) <= ulp * 1.01), op


def test_unary_mask_form_with_strides() -> None:
    # Exp over every other block of the source (srcBlkStride 2), packed into dst (dstBlkStride 1).
    x = data("f32", 256, -3.0, 3.0)
    s = Script().alloc("x", "f32", 256, x).alloc("d", "f32", 128, np.full(128, SENTINEL))
    s.call("UN", "Abs", "f32", "mask", "d", "x", 64, 2, 1, 2, 8, 16)
    out = run_ok(s.dump("d", 128)).outputs["d"]
    idx = [p for row in positions(2, list(range(64)), 2, 16, 4) for p in row]
    assert np.array_equal(out, np.abs(x[idx]))


def test_duplicate_count_and_mask_forms() -> None:
    s = (
        Script()
        .alloc("c", "f32", 128, np.full(128, SENTINEL))
        .alloc("m", "f16", 512, np.full(512, SENTINEL))
    )
    s.call("DUP", "f32", "count", "c", 2.5, 100)
    # half: mask 20 lanes, 2 repeats, block stride 2, repeat stride 16 blocks
    s.call("DUP", "f16", "mask", "m", -1.5, 20, 2, 2, 16)
    out = run_ok(s.dump("c", 128).dump("m", 512)).outputs
    assert np.all(out["c"][:100] == 2.5) and np.all(out["c"][100:] == SENTINEL)
    want = np.full(512, SENTINEL, dtype=np.float16)
    for row in positions(2, list(range(20)), 2, 16, 2):
        want[row] = -1.5
    assert np.array_equal(out["m"], want)


def test_each_call_is_one_v_instruction_costing_startup_plus_repeats() -> None:
    # ops_engine_setup.h: startup 10, 2 cycles per repeat. 300 floats = 4 full repeats + a tail.
    n = 300
    s = Script().alloc("a", "f32", n, data("f32", n)).alloc("d", "f32", n)
    s.call("BIN", "Add", "f32", "count", "d", "a", "a", n)
    s.call("BIN", "Add", "f32", "mask", "d", "a", "a", 64, 3, 1, 1, 1, 8, 8, 8)
    s.call("UN", "Exp", "f32", "count", "d", "a", 64)
    stats = run_ok(s.stats()).stats
    assert stats["Add"] == (2, (10 + 5 * 2) + (10 + 3 * 2))
    assert stats["Exp"] == (1, 10 + 1 * 2)
