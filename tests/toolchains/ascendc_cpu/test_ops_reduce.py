"""Reductions of the ascendc-cpu library against the documented accumulation orders.

ReduceSum (atlasascendc_api_07_0078): on Atlas A2 the count form sums each repeat by a binary tree
and then the repeat results in order (method 2); the mask/repeat form uses a tree across repeats
too (method 1); half pairwise sums above 65504 are stored as 65504. Inputs are chosen so that the
two orders give different float32 results, so the tests tell the orders apart bit for bit.
"""

from __future__ import annotations

import numpy as np

from tests.toolchains.ascendc_cpu.ops_cases.driver import DTYPES, Script, run_ok

SENTINEL = 7.0


def add(a, b, dt: str):
    """One pairwise addition of the reduction unit (half saturates at +-65504)."""
    if dt == "f32":
        return np.float32(np.float32(a) + np.float32(b))
    s = np.float32(a) + np.float32(b)
    if np.isfinite(s):
        s = np.float32(min(max(float(s), -65504.0), 65504.0))
    return np.float16(s)


def tree(vals: list, dt: str):
    v = list(vals)
    while len(v) > 1:
        v = [add(v[2 * i], v[2 * i + 1], dt) for i in range(len(v) // 2)]
    return v[0]


def repeat_sums(x: np.ndarray, dt: str, repeats: int, lanes_on: list[int], rep_elems: int) -> list:
    lanes = 256 // (4 if dt == "f32" else 2)
    zero = DTYPES[dt](0)
    out = []
    for r in range(repeats):
        v = [zero] * lanes
        for i in lanes_on:
            v[i] = x[r * rep_elems + i]
        out.append(tree(v, dt))
    return out


def method2(sums: list, dt: str):
    acc = sums[0]
    for s in sums[1:]:
        acc = add(acc, s, dt)
    return acc


def method1(sums: list, dt: str):
    lanes = 256 // (4 if dt == "f32" else 2)
    zero = DTYPES[dt](0)
    v = list(sums)
    while len(v) > 1:
        v = [tree((v[c : c + lanes] + [zero] * lanes)[:lanes], dt) for c in range(0, len(v), lanes)]
    return v[0]


def mixed(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 10.0 ** rng.uniform(-2, 7, n)).astype(np.float32)


def f32_bits(v) -> int:
    return int(np.array([v], np.float32).view(np.uint32)[0])


def test_count_form_reduce_sum_is_tree_then_in_order() -> None:
    n = 64 * 5 + 17
    x = mixed(n, 6)  # a seed on which the two orders differ (asserted below)
    s = (
        Script()
        .alloc("x", "f32", n, x)
        .alloc("w", "f32", 64)
        .alloc("d", "f32", 8, np.full(8, SENTINEL))
    )
    out = run_ok(s.call("RSUM", "f32", "count", "d", "x", "w", n).dump("d", 8)).outputs["d"]
    padded = np.concatenate([x, np.zeros(6 * 64 - n, np.float32)])
    sums = repeat_sums(padded, "f32", 6, list(range(64)), 64)
    want = method2(sums, "f32")
    assert f32_bits(want) != f32_bits(method1(sums, "f32"))  # the orders differ on this input
    assert f32_bits(out[0]) == f32_bits(want)
    assert np.all(out[1:] == SENTINEL)  # only dst[0] is written


def test_mask_form_reduce_sum_is_a_tree_across_repeats() -> None:
    repeats, mask = 70, 50  # more repeats than one 256-byte chunk of results: two tree levels
    x = mixed(repeats * 64, 2)
    s = Script().alloc("x", "f32", repeats * 64, x).alloc("w", "f32", 80).alloc("d", "f32", 8)
    out = run_ok(s.call("RSUM", "f32", "mask", "d", "x", "w", mask, repeats, 8).dump("d", 1))
    sums = repeat_sums(x, "f32", repeats, list(range(mask)), 64)
    want = method1(sums, "f32")
    assert f32_bits(want) != f32_bits(method2(sums, "f32"))
    assert f32_bits(out.outputs["d"][0]) == f32_bits(want)


def test_bitwise_mask_and_repeat_stride_of_reduce_sum_in_half() -> None:
    lo, hi = 0xFFFF_0000_FFFF_0000, 0x1
    on = [i for i in range(128) if ((lo >> i) if i < 64 else (hi >> (i - 64))) & 1]
    x = np.random.default_rng(4).uniform(-10, 10, 128 * 6).astype(np.float16)
    s = Script().alloc("x", "f16", 128 * 6, x).alloc("w", "f16", 16).alloc("d", "f16", 16)
    s.call("RSUM", "f16", "bits", "d", "x", "w", lo, hi, 3, 16)  # repeat stride 16 blocks
    out = run_ok(s.dump("d", 1)).outputs["d"]
    want = method1(repeat_sums(x, "f16", 3, on, 256), "f16")
    assert out.view(np.uint16)[0] == np.array([want]).view(np.uint16)[0]


def test_half_pairwise_sums_saturate_at_65504() -> None:
    # atlasascendc_api_07_0078: [60000, 60000, -30000, 100]: 60000 + 60000 -> 65504, then
    # -30000 + 100 = -29900, then 65504 - 29900 = 35604 (IEEE would give inf). In binary16 each
    # step rounds: -29900 -> -29904, 65504 - 29904 = 35600 -> 35584 (a tie, to even).
    x = np.array([60000, 60000, -30000, 100] + [0] * 12, dtype=np.float16)
    s = Script().alloc("x", "f16", 16, x).alloc("w", "f16", 16)
    s.alloc("a", "f16", 16).alloc("b", "f16", 16).alloc("c", "f16", 16)
    s.call("RSUM", "f16", "count", "a", "x", "w", 4)
    s.call("WRSUM", "f16", "mask", "b", "x", 16, 1, 1, 1, 8)
    s.call("BRSUM", "f16", "mask", "c", "x", 1, 16, 1, 1, 8)
    out = run_ok(s.dump("a", 1).dump("b", 1).dump("c", 1)).outputs
    want = float(add(np.float16(65504), add(np.float16(-30000), np.float16(100), "f16"), "f16"))
    assert want == 35584.0
    assert [float(out[k][0]) for k in "abc"] == [want] * 3


def test_whole_reduce_sum_writes_one_sum_per_repeat_at_dst_rep_stride() -> None:
    x = mixed(3 * 64, 5)
    s = Script().alloc("x", "f32", 192, x).alloc("d", "f32", 8, np.full(8, SENTINEL))
    s.call("WRSUM", "f32", "mask", "d", "x", 64, 3, 2, 1, 8)  # dstRepStride 2 elements
    out = run_ok(s.dump("d", 8)).outputs["d"]
    sums = repeat_sums(x, "f32", 3, list(range(64)), 64)
    assert [f32_bits(out[k]) for k in (0, 2, 4)] == [f32_bits(v) for v in sums]
    assert out[1] == out[3] == out[5] == SENTINEL


def test_block_reduce_sum_gives_eight_block_sums_per_repeat() -> None:
    x = mixed(2 * 64, 6)
    s = Script().alloc("x", "f32", 128, x).alloc("d", "f32", 16)
    out = run_ok(s.call("BRSUM", "f32", "mask", "d", "x", 2, 64, 1, 1, 8).dump("d", 16)).outputs[
        "d"
    ]
    want = [tree(list(x[k * 8 : k * 8 + 8]), "f32") for k in range(16)]
    assert [f32_bits(v) for v in out] == [f32_bits(v) for v in want]


def test_reduce_max_min_value_and_first_index() -> None:
    n = 300
    x = np.random.default_rng(8).uniform(-50, 50, n).astype(np.float32)
    x[70] = x[130] = 99.0  # two equal maxima: the first index is returned
    x[250] = -99.0
    s = Script().alloc("x", "f32", n, x).alloc("w", "f32", 64)
    s.alloc("mx", "f32", 8).alloc("mn", "f32", 8).alloc("mv", "f32", 8)
    s.call("RMAX", "f32", "count", "mx", "x", "w", n, 1)
    s.call("RMIN", "f32", "count", "mn", "x", "w", n, 1)
    s.call("RMAX", "f32", "count", "mv", "x", "w", n, 0)
    out = run_ok(s.dump("mx", 2).dump("mn", 2).dump("mv", 1)).outputs
    assert out["mx"][0] == 99.0 and out["mx"].view(np.uint32)[1] == 70
    assert out["mn"][0] == -99.0 and out["mn"].view(np.uint32)[1] == 250
    assert out["mv"][0] == 99.0


def test_reduce_max_mask_form_in_half_indexes_repeat_times_lanes() -> None:
    x = np.random.default_rng(9).uniform(-5, 5, 512).astype(np.float16)
    x[3 * 128 + 77] = 9.0
    s = Script().alloc("x", "f16", 512, x).alloc("w", "f16", 32).alloc("d", "f16", 16)
    out = run_ok(s.call("RMAX", "f16", "mask", "d", "x", "w", 128, 4, 8, 1).dump("d", 2))
    assert out.outputs["d"][0] == 9.0
    assert out.outputs["d"].view(np.uint16)[1] == 3 * 128 + 77


def test_reduce_max_shared_tmp_buffer_minimum() -> None:
    # the page's example: half, repeatTime 65, mask 128, with index -> 176 elements minimum
    x = np.random.default_rng(10).uniform(-5, 5, 65 * 128).astype(np.float16)

    def run(tmp_elems: int):
        s = (
            Script()
            .alloc("x", "f16", 65 * 128, x)
            .alloc("w", "f16", tmp_elems)
            .alloc("d", "f16", 16)
        )
        return s.call("RMAX", "f16", "mask", "d", "x", "w", 128, 65, 8, 1).run()

    assert run(176).misuse is None
    small = run(160)
    assert small.misuse["check"] == "ub_out_of_bounds"
    assert "sharedTmpBuffer" in small.misuse["message"] and "176" in small.misuse["message"]


def test_reduce_sum_dst_overlapping_a_small_tmp_buffer_is_misuse() -> None:
    # 20 repeats of floats need RoundUp(20, 8) = 24 elements before dst may overlap the buffer
    x = mixed(20 * 64, 11)
    s = Script().alloc("x", "f32", 20 * 64, x).alloc("w", "f32", 8)
    res = s.call("RSUM", "f32", "count", "w", "x", "w", 20 * 64).run()
    assert res.misuse["check"] == "unsupported_argument"
    assert "sharedTmpBuffer" in res.misuse["message"]


def test_reduce_sum_cost_counts_every_pass() -> None:
    # 337 floats = 6 repeats, then one repeat over the 6 partial sums: 2 passes, 7 repeats
    n = 337
    s = Script().alloc("x", "f32", n, mixed(n, 12)).alloc("w", "f32", 8).alloc("d", "f32", 8)
    stats = run_ok(s.call("RSUM", "f32", "count", "d", "x", "w", n).stats()).stats
    assert stats["ReduceSum"] == (1, 2 * 10 + 7 * 2)


def test_whole_reduce_max_min_per_repeat_value_and_index_in_each_order() -> None:
    # atlasascendc_api_07_0079: per repeat the extreme and its index inside the repeat;
    # dstRepStride in units of one repeat's output (2 elements with the index, 1 without).
    x = np.random.default_rng(13).uniform(-5, 5, 3 * 64).astype(np.float32)
    x[64 + 10] = x[64 + 40] = 8.0  # repeat 1: two equal maxima, the first lane is returned
    s = Script().alloc("x", "f32", 192, x)
    cases = [
        ("vi", "WRMAX", 0, 6),
        ("iv", "WRMAX", 1, 6),
        ("v", "WRMIN", 2, 3),
        ("i", "WRMIN", 3, 3),
    ]
    for name, api, order, written in cases:
        s.alloc(name, "f32", 8).call(api, "f32", "mask", name, "x", 64, 3, 1, 1, 8, order)
        s.dump(name, written)
    out = run_ok(s).outputs
    rows = x.reshape(3, 64)
    vi = out["vi"].reshape(3, 2)
    assert vi[:, 0].tolist() == rows.max(axis=1).tolist()
    assert (
        vi.view(np.uint32)[:, 1].tolist()
        == rows.argmax(axis=1).tolist()
        == [rows[0].argmax(), 10, rows[2].argmax()]
    )
    iv = out["iv"].reshape(3, 2)
    assert iv.view(np.uint32)[:, 0].tolist() == rows.argmax(axis=1).tolist()
    assert out["v"][:3].tolist() == rows.min(axis=1).tolist()
    assert out["i"].view(np.uint32)[:3].tolist() == rows.argmin(axis=1).tolist()


def test_whole_reduce_max_in_half_stores_a_16_bit_index() -> None:
    x = np.random.default_rng(14).uniform(-5, 5, 256).astype(np.float16)
    x[128 + 100] = 9.0
    s = Script().alloc("x", "f16", 256, x).alloc("d", "f16", 16)
    out = run_ok(s.call("WRMAX", "f16", "mask", "d", "x", 128, 2, 1, 1, 8, 0).dump("d", 4)).outputs[
        "d"
    ]
    assert out[2] == 9.0 and out.view(np.uint16)[3] == 100
    assert out.view(np.uint16)[1] == int(np.argmax(x[:128]))


def test_reduce_max_half_index_past_65535_is_unsupported() -> None:
    # the ReduceMax page: with half input only indexes up to 65535 (uint16_t) can be returned
    n = 66000
    x = np.zeros(n, dtype=np.float16)

    def run(at: int):
        y = x.copy()
        y[at] = 5.0
        s = Script().alloc("x", "f16", n, y).alloc("w", "f16", 1088).alloc("d", "f16", 16)
        return s.call("RMAX", "f16", "count", "d", "x", "w", n, 1).run()

    assert run(100).misuse is None
    far = run(65600)
    assert far.misuse["check"] == "unsupported_argument"
    assert "65600" in far.misuse["message"]
