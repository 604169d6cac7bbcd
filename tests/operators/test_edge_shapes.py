"""Shapes the local cases do not cover: the template and the fast kernel must stay general.

Hidden cases use other shapes, so ranks 0 and 8, reductions over broadcast or extent-1 axes and
alternating reduce patterns are run through the real harness here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from justkernel.operators import (
    CaseSpec,
    InputPack,
    OperatorDefinition,
    build_input_pack,
    check_pack_outputs,
    run_pack,
)

EDGE_CASES = [
    # id, input0, input1, input2, dtype, axes, keep_dims
    ("e01_all_scalars", (), (), (), "float32", (), False),
    ("e02_scalar_in1_rank0", (3,), (), (4, 1), "float32", (0,), False),
    ("e03_reduce_extent_one", (5, 1, 3), (5, 1, 3), (5, 1, 3), "float16", (1,), True),
    ("e04_4d_mixed_bcast", (2, 1, 4, 5), (2, 3, 1, 5), (3, 4, 1), "float32", (0, 2), False),
    (
        "e05_rank8",
        (2, 1, 2, 1, 2, 1, 2, 3),
        (1,) * 8,
        (2, 3, 2, 3, 2, 3, 2, 3),
        "float32",
        (1, 3, 5, 7, -2),
        False,
    ),
    ("e06_f16_scalar_full_keep", (33, 65), (1, 1), (33, 65), "float16", (), True),
    ("e07_alternating", (3, 4, 5, 6), (3, 4, 5, 6), (3, 4, 5, 6), "float32", (0, 2), True),
    ("e08_outer_product", (7, 1), (1, 33), (7, 33), "float32", (1,), False),
    ("e09_in2_broadcast", (40, 17), (40, 17), (17,), "float16", (0,), False),
    ("e10_long_row", (1, 70_001), (1, 70_001), (1, 70_001), "float32", (-1,), True),
]


@pytest.fixture(scope="module")
def edge_pack(
    definition: OperatorDefinition, tmp_path_factory: pytest.TempPathFactory
) -> InputPack:
    cases = [
        CaseSpec(
            id=cid,
            input0=s0,
            input1=s1,
            input2=s2,
            dtype=dtype,
            axes=axes,
            keep_dims=keep,
            distribution="positive" if i % 2 else "symmetric",
            seed=9000 + i,
        )
        for i, (cid, s0, s1, s2, dtype, axes, keep) in enumerate(EDGE_CASES)
    ]
    return build_input_pack(cases, tmp_path_factory.mktemp("edge") / "pack", definition)


@pytest.mark.parametrize("variant", [None, "fast_fused_blocked"])
def test_edge_shapes_pass(
    variant: str | None,
    variant_harness: Callable[[str | None], Path],
    edge_pack: InputPack,
    tmp_path: Path,
) -> None:
    runs = run_pack(variant_harness(variant), edge_pack, tmp_path)
    assert all(r.ok for r in runs), [(r.case_id, r.status, r.stderr) for r in runs if not r.ok]
    failed = [c.case_id for c in check_pack_outputs(edge_pack, tmp_path) if not c.passed]
    assert failed == []
