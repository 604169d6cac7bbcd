"""The golden matches a plain float64 computation, with broadcasting and keep_dims shapes."""

from __future__ import annotations

import numpy as np

from justkernel.operators import CaseSpec, compute_golden, generate_inputs, reference


def test_hand_made_row_and_column() -> None:
    in0 = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    in1 = np.array([[1, 1, 2], [0.5, -1, 3]], dtype=np.float32)
    in2 = np.array([[2, 3, 4], [4, 2, 1]], dtype=np.float32)
    out0, rows = reference(in0, in1, in2, [1], False, np.float32)
    assert out0.tolist() == [[1, 2, 6], [2, -5, 18]]
    assert rows.tolist() == [2 + 3 + 8, 2 - 2 + 3]
    _, cols = reference(in0, in1, in2, [0], True, np.float32)
    assert cols.shape == (1, 3)
    assert cols.tolist() == [[4, 1, 11]]
    _, total = reference(in0, in1, in2, [], False, np.float32)
    assert total.shape == () and float(total) == 16.0


def test_hand_made_broadcasting() -> None:
    in0 = np.array([10.0], dtype=np.float32)  # scalar-like input0
    in1 = np.array([[1.0], [2.0]], dtype=np.float32)  # column (2, 1)
    in2 = np.array([1.0, 2.0, 3.0], dtype=np.float32)  # row (3,)
    out0, out1 = reference(in0, in1, in2, [-1], True, np.float32)
    assert out0.shape == (2, 1) and out0.ravel().tolist() == [10, 20]
    assert out1.shape == (2, 1) and out1.ravel().tolist() == [6, 12]
    _, out1 = reference(in0, in1, in2, [0], False, np.float32)
    assert out1.tolist() == [3, 6, 9]


def test_float16_sum_is_exact_then_rounded_once() -> None:
    # 2049 ones: a float16 accumulator would stick at 2048; the golden rounds 2049 -> 2048
    # (tie to even) only at the end, and 4097 ones -> 4096 likewise, but 2050 stays 2050.
    for n, expected in ((2049, 2048.0), (2050, 2050.0), (4099, 4100.0)):
        ones = np.ones(n, dtype=np.float16)
        _, out1 = reference(ones, ones, ones, [], False, np.float16)
        assert out1.dtype == np.float16 and float(out1) == expected


def test_golden_matches_plain_float64_on_a_case() -> None:
    case = CaseSpec(
        id="c",
        input0=(1, 1, 7),
        input1=(1, 5, 1),
        input2=(3, 5, 7),
        dtype="float32",
        axes=(0, 2),
        keep_dims=True,
        distribution="symmetric",
        seed=7,
    )
    inputs = generate_inputs(case)
    out0, out1 = compute_golden(case, inputs)
    a0, a1, a2 = (x.astype(np.float64) for x in inputs)
    expected1 = np.zeros((1, 5, 1))
    for i in range(3):
        for j in range(5):
            for k in range(7):
                expected1[0, j, 0] += a1[0, j, 0] * a2[i, j, k]
    assert out0.shape == (1, 5, 7) and out0.dtype == np.float32
    assert np.array_equal(out0, (a0 * a1).astype(np.float32))
    assert np.array_equal(out1, expected1.astype(np.float32))
