"""Cast of the ascendc-cpu library, every RoundMode, against an independent Python reference.

The reference picks between the two neighbouring representable values (found by search over all
halves / by nextafter for floats) with the rules of atlasascendc_api_07_0073; overflow follows
IEEE 754 per rounding direction (Atlas A2's default Inf/NaN mode), integers saturate.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest

from tests.toolchains.ascendc_cpu.ops_cases.driver import Script, run_ok

MODES = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC", "ODD"]
ALL_HALF_BITS = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
_FINITE = ALL_HALF_BITS[np.isfinite(ALL_HALF_BITS.view(np.float16))]
_PAIRS = sorted(
    {float(v): int(b) for b, v in zip(_FINITE, _FINITE.view(np.float16), strict=True)}.items()
)
HALF_VALUES = [v for v, _ in _PAIRS] + [65536.0]  # 65536 stands for +inf (the next "value")
HALF_BITS = [b for _, b in _PAIRS] + [0x7C00]


def pick(x: float, lo: float, hi: float, lo_odd: bool, mode: str) -> float:
    """Choose lo or hi (lo < x < hi, both of x's sign or zero) per the documented rules."""
    neg = x < 0 or (x == 0 and math.copysign(1, x) < 0)
    small, big = (hi, lo) if neg else (lo, hi)  # by magnitude
    dist_small, dist_big = abs(x - small), abs(big - x)
    if mode in ("NONE", "RINT"):
        if dist_small != dist_big:
            return small if dist_small < dist_big else big
        return hi if lo_odd else lo  # tie: the even neighbour
    if mode == "ROUND":
        return small if dist_small < dist_big else big
    if mode == "TRUNC":
        return small
    if mode == "FLOOR":
        return lo
    if mode == "CEIL":
        return hi
    return lo if lo_odd else hi  # ODD: the neighbour whose last bit is 1


def ref_f32_to_f16(x: np.float32, mode: str) -> np.float16:
    v = float(x)
    if math.isnan(v):
        return np.float16(np.nan)
    if math.isinf(v):
        return np.float16(v)
    a = abs(v)
    k = bisect.bisect_left(HALF_VALUES, a)
    if k < len(HALF_VALUES) and HALF_VALUES[k] == a and a <= 65504:
        return np.float16(v)
    if k >= len(HALF_VALUES):  # beyond 65536: both neighbours are 65504 and "inf"
        k = len(HALF_VALUES) - 1
    lo, hi = HALF_VALUES[k - 1], HALF_VALUES[k]
    lo_odd = bool(HALF_BITS[k - 1] & 1)
    # pick on magnitudes with the sign folded in for FLOOR/CEIL
    if v < 0:
        m = {"FLOOR": "CEIL", "CEIL": "FLOOR"}.get(mode, mode)
        r = pick(a, lo, hi, lo_odd, m)
    else:
        r = pick(a, lo, hi, lo_odd, mode)
    r = math.inf if r == 65536.0 else r
    return np.float16(math.copysign(r, v))


def ref_to_int(v: float, mode: str) -> int:
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return 2**31 - 1 if v > 0 else -(2**31)
    r = {
        "NONE": round(v),  # Python rounds half to even
        "RINT": round(v),
        "FLOOR": math.floor(v),
        "CEIL": math.ceil(v),
        "TRUNC": math.trunc(v),
        "ROUND": int(math.copysign(math.floor(abs(v) + 0.5), v)),
    }[mode]
    return max(-(2**31), min(2**31 - 1, r))


F32_EDGES = np.array(
    [
        0.5 + 2**-12,  # the page's example: a tie between 0.5 and 0.5 + 2^-11
        0.5 + 2**-11 + 2**-12,  # tie with an odd lower neighbour
        -(0.5 + 2**-12),
        1.0 + 2**-11 + 2**-20,  # just above a tie
        2**-25,  # half of the smallest subnormal: a tie at zero
        3 * 2**-26,
        -(2**-25) * 1.5,
        6e-8,
        1e-10,
        -1e-10,
        65504.0,
        65519.0,
        65520.0,  # the IEEE overflow threshold for round-to-nearest
        65535.0,
        65536.0,
        70000.0,
        -70000.0,
        1e38,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        2.5,
        -2.5,
        3.5,
        1.0 / 3.0,
    ],
    dtype=np.float32,
)


def f32_inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    rnd = (rng.standard_normal(200) * 10.0 ** rng.uniform(-9, 5, 200)).astype(np.float32)
    return np.concatenate([F32_EDGES, rnd]).astype(np.float32)


def run_cast(ddt: str, sdt: str, src: np.ndarray, modes: list[str]) -> dict[str, np.ndarray]:
    n = len(src)
    s = Script().alloc("s", sdt, n, src)
    for m in modes:
        s.alloc(m, ddt, n).call("CAST", ddt, sdt, m, "count", m, "s", n).dump(m, n)
    return run_ok(s).outputs


def test_float_to_half_every_mode() -> None:
    x = f32_inputs()
    out = run_cast("f16", "f32", x, MODES)
    for m in MODES:
        want = np.array([ref_f32_to_f16(v, m) for v in x], dtype=np.float16)
        got = out[m]
        bad = [
            (float(x[i]), float(got[i]), float(want[i]))
            for i in range(len(x))
            if got.view(np.uint16)[i] != want.view(np.uint16)[i]
        ]
        assert not bad, (m, bad[:5])
    # the page's worked example (0.5 + 2^-12): RINT/FLOOR/TRUNC 0.5, CEIL/ROUND/ODD 0.5 + 2^-11
    up = 0.5 + 2**-11
    assert [float(out[m][0]) for m in MODES] == [0.5, 0.5, 0.5, up, up, 0.5, up]
    # NONE rounds like numpy's float16 conversion (round to nearest even, overflow to inf)
    with np.errstate(over="ignore"):
        numpy_rne = x.astype(np.float16)
    assert np.array_equal(out["NONE"].view(np.uint16), numpy_rne.view(np.uint16))


def test_float_and_half_to_int32_every_mode() -> None:
    x = np.concatenate(
        [
            np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2**22 + 0.5, 3e9, -3e9, np.nan], np.float32),
            np.random.default_rng(3).uniform(-1000, 1000, 100).astype(np.float32),
        ]
    )
    modes = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC"]
    out = run_cast("i32", "f32", x, modes)
    for m in modes:
        assert out[m].tolist() == [ref_to_int(float(v), m) for v in x], m
    # the page's example 2^22 + 0.5: RINT/FLOOR/TRUNC 2^22, CEIL/ROUND 2^22 + 1
    assert [int(out[m][6]) for m in ["RINT", "FLOOR", "CEIL", "ROUND", "TRUNC"]] == [
        2**22,
        2**22,
        2**22 + 1,
        2**22 + 1,
        2**22,
    ]
    h = np.array([0.5, -0.5, 2.5, -3.5, 65504, -65504, 1.25, np.inf], dtype=np.float16)
    out16 = run_cast("i32", "f16", h, modes)
    for m in modes:
        assert out16[m].tolist() == [ref_to_int(float(v), m) for v in h], m


def test_half_to_float_is_exact() -> None:
    # every third bit pattern (all of them would not fit the UB twice) plus the specials
    special = np.array([0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8001, 0x03FF, 0x0400, 0x8000], np.uint16)
    h = np.concatenate([ALL_HALF_BITS[::3], special]).view(np.float16)
    out = run_cast("f32", "f16", h, ["NONE"])["NONE"]
    want = h.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(out), nan)
    assert np.array_equal(out[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_int32_to_float_every_mode() -> None:
    vals = [2**24 + 1, 2**24 + 3, -(2**24 + 1), -(2**24 + 3), 2**31 - 1, -(2**31), 123, -7, 0]
    i = np.array(vals, dtype=np.int32)
    modes = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC"]
    out = run_cast("f32", "i32", i, modes)
    for m in modes:
        want = []
        for v in vals:
            lo = (
                float(np.float32(v))
                if float(np.float32(v)) <= v
                else float(np.nextafter(np.float32(v), np.float32(-np.inf)))
            )
            hi = float(np.nextafter(np.float32(lo), np.float32(np.inf)))
            if lo == v:
                want.append(np.float32(v))
                continue
            lo_bits = int(np.array([lo], np.float32).view(np.uint32)[0])
            if v < 0:  # magnitudes: -hi < ... ; bits of the float parity are sign-independent
                m2 = {"FLOOR": "CEIL", "CEIL": "FLOOR"}.get(m, m)
                hi_bits = int(np.array([hi], np.float32).view(np.uint32)[0])
                want.append(np.float32(-pick(-v, -hi, -lo, bool(hi_bits & 1), m2)))
            else:
                want.append(np.float32(pick(v, lo, hi, bool(lo_bits & 1), m)))
        assert out[m].tolist() == [float(w) for w in want], m


def test_float_to_float_rounds_to_integral_values() -> None:
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 1e10, -7.25], dtype=np.float32)
    modes = ["RINT", "FLOOR", "CEIL", "ROUND", "TRUNC"]
    out = run_cast("f32", "f32", x, modes)
    # the page: input 0.5 -> RINT 0, FLOOR 0, CEIL 1, ROUND 1, TRUNC 0
    assert [float(out[m][0]) for m in modes] == [0.0, 0.0, 1.0, 1.0, 0.0]
    for m in modes:
        assert out[m].tolist() == [
            float(ref_to_int(float(v), m)) if abs(v) < 2**31 else float(v) for v in x
        ], m


def test_mask_form_uses_the_wider_type_for_lanes() -> None:
    # float -> half, 64 lanes per repeat: src repeat stride 8 blocks, dst 4 blocks = contiguous.
    x = f32_inputs()[:128]
    s = Script().alloc("s", "f32", 128, x).alloc("c", "f16", 128).alloc("m", "f16", 128)
    s.call("CAST", "f16", "f32", "RINT", "count", "c", "s", 128)
    s.call("CAST", "f16", "f32", "RINT", "mask", "m", "s", 64, 2, 1, 1, 4, 8)
    out = run_ok(s.dump("c", 128).dump("m", 128)).outputs
    assert np.array_equal(out["c"].view(np.uint16), out["m"].view(np.uint16))


@pytest.mark.parametrize(("ddt", "sdt"), [("i32", "f32"), ("f32", "f16"), ("f32", "i32")])
def test_cast_odd_outside_float_to_half_is_misuse(ddt: str, sdt: str) -> None:
    s = Script().alloc("s", sdt, 8, np.zeros(8)).alloc("d", ddt, 8)
    res = s.call("CAST", ddt, sdt, "ODD", "count", "d", "s", 8).run()
    assert res.returncode == 7
    assert res.misuse["check"] == "unsupported_argument"
    assert "CAST_ODD" in res.misuse["message"]


def test_cast_cost_is_looked_up_by_the_source_dtype() -> None:
    # ops_engine_setup.h: 3 cycles per repeat for 2-byte, 2 for 4-byte dtypes. half -> float over
    # 128 elements is 2 repeats of 64 lanes (the wider type) costed as a half instruction.
    s = Script().alloc("h", "f16", 128, np.ones(128)).alloc("f", "f32", 128)
    s.call("CAST", "f32", "f16", "NONE", "count", "f", "h", 128)
    assert run_ok(s.stats()).stats["Cast"] == (1, 10 + 2 * 3)
