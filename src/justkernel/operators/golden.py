"""Golden reference for ConfusionMulGrad, computed in float64 and rounded once to the output dtype.

float64 holds every product of two float32 (or float16) values exactly and sums millions of them
far more accurately than any kernel, so the golden never penalises a more accurate kernel the way
numpy's own float32 sum would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from justkernel.operators.cases import CaseSpec


def reference(
    input0: np.ndarray,
    input1: np.ndarray,
    input2: np.ndarray,
    axes: Sequence[int],
    keep_dims: bool,
    out_dtype: np.dtype | str,
) -> tuple[np.ndarray, np.ndarray]:
    """output0 = input0 * input1; output1 = reduce_sum(input1 * input2, axes or all, keep_dims)."""
    a0, a1, a2 = (np.asarray(x, dtype=np.float64) for x in (input0, input1, input2))
    out0 = a0 * a1
    product = a1 * a2
    reduce = tuple(axes) if axes else tuple(range(product.ndim))
    out1 = np.sum(product, axis=reduce, keepdims=keep_dims)
    return out0.astype(out_dtype), np.asarray(out1).astype(out_dtype)


def compute_golden(
    case: CaseSpec, inputs: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The two expected outputs of one case, shaped as the case says."""
    out0, out1 = reference(*inputs, case.axes, case.keep_dims, case.numpy_dtype)
    if out0.shape != case.output0_shape or out1.shape != case.output1_shape:
        raise AssertionError(
            f"{case.id}: golden shapes {out0.shape}, {out1.shape} disagree with case"
        )
    return out0, out1
