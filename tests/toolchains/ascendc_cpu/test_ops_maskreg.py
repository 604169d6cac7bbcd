"""The vector mask register of the ascendc-cpu library (APIs called with isSetMask = false).

SetMaskCount / SetMaskNorm / SetVectorMask (atlasascendc_api_07_0093..0097): in Counter mode the
register holds an element count, the instruction infers its repeats (repeatTimes has no effect)
and the last repeat is partial; in Normal mode it holds the per-repeat bit mask. The pages require
SetMaskNorm after Counter-mode use: an API that sets its own mask while in Counter mode is misuse.
"""

from __future__ import annotations

import numpy as np

from tests.toolchains.ascendc_cpu.ops_cases.driver import Script, run_ok

SENTINEL = 7.0
STRIDES = (1, 1, 1, 8, 8, 8)


def sources(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(21)
    return rng.uniform(-9, 9, n).astype(np.float32), rng.uniform(-9, 9, n).astype(np.float32)


def test_counter_mode_equals_the_count_form() -> None:
    # the page's example: SetMaskCount(); SetVectorMask(len); Add<float, false>(..., 0, 1, {...})
    # "功能等同 Add(dst, src0, src1, len)"; repeatTimes 1 has no effect: 200 floats = 4 repeats.
    a, b = sources(256)
    s = Script().alloc("a", "f32", 256, a).alloc("b", "f32", 256, b)
    s.alloc("d", "f32", 256, np.full(256, SENTINEL))
    s.lines += ["maskreg count", "maskreg len f32 200"]
    s.call("BIN", "Add", "f32", "reg", "d", "a", "b", 1, *STRIDES)
    s.lines.append("maskreg norm")
    res = run_ok(s.dump("d", 256).stats())
    out = res.outputs["d"]
    assert np.array_equal(out[:200], a[:200] + b[:200])
    assert np.all(out[200:] == SENTINEL)
    assert res.stats["Add"] == (1, 10 + 4 * 2)


def test_normal_mode_register_is_the_bit_mask() -> None:
    lo, hi = 0x00FF_00FF_00FF_00FF, 0xF000_0000_0000_000F
    a16 = np.random.default_rng(22).uniform(-9, 9, 256).astype(np.float16)
    s = Script().alloc("a", "f16", 256, a16)
    s.alloc("r", "f16", 256, np.full(256, SENTINEL)).alloc("m", "f16", 256, np.full(256, SENTINEL))
    s.lines.append(f"maskreg bits f16 {hi} {lo}")
    s.call("BIN", "Mul", "f16", "reg", "r", "a", "a", 2, *STRIDES)
    s.call("BIN", "Mul", "f16", "bits", "m", "a", "a", lo, hi, 2, *STRIDES)
    out = run_ok(s.dump("r", 256).dump("m", 256)).outputs
    assert np.array_equal(out["r"].view(np.uint16), out["m"].view(np.uint16))
    assert np.sum(out["r"] != SENTINEL) > 0


def test_an_own_mask_while_in_counter_mode_is_misuse() -> None:
    a, b = sources(64)
    s = Script().alloc("a", "f32", 64, a).alloc("b", "f32", 64, b).alloc("d", "f32", 64)
    s.lines.append("maskreg count")
    res = s.call("BIN", "Add", "f32", "mask", "d", "a", "b", 64, 1, *STRIDES).run()
    assert res.misuse["check"] == "unsupported_argument"
    assert "SetMaskNorm" in res.misuse["message"]


def test_block_reduce_sum_in_counter_mode_ends_with_a_partial_repeat() -> None:
    # a common idiom: SetMaskCount(); SetVectorMask<float>(0, n); BlockReduceSum<float, false>(
    # dst, src, 1, MASK_PLACEHOLDER, 1, 1, 8): n = 100 floats -> 2 repeats, 16 block sums
    x = np.random.default_rng(23).uniform(-9, 9, 128).astype(np.float32)
    s = Script().alloc("x", "f32", 128, x).alloc("d", "f32", 16)
    s.lines += ["maskreg count", "maskreg bits f32 0 100"]
    s.call("BRSUM", "f32", "reg", "d", "x", 1, 1, 1, 8)
    out = run_ok(s.dump("d", 16)).outputs["d"]
    padded = np.concatenate([x[:100], np.zeros(28, np.float32)])
    for k in range(16):
        v = list(padded[8 * k : 8 * k + 8])
        while len(v) > 1:
            v = [np.float32(v[2 * i] + v[2 * i + 1]) for i in range(len(v) // 2)]
        assert out[k] == v[0], k
