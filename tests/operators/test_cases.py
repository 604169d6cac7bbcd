"""The local and perf case sets cover what the brief asks and generate deterministically."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from justkernel.operators import (
    CaseSpec,
    OperatorDefinition,
    generate_inputs,
    load_case_file,
    local_cases,
    perf_cases,
)


def _layout(case: CaseSpec) -> str:
    """row / column / full / other, judged on the product shape without extent-1 dims."""
    shape = case.product_shape
    reduced = set(case.reduce_axes)
    kinds = [d in reduced for d, n in enumerate(shape) if n > 1]
    if all(kinds):
        return "full"
    if kinds == [False, True]:
        return "row"
    if kinds == [True, False]:
        return "column"
    return "other"


def test_local_case_coverage(definition: OperatorDefinition) -> None:
    cases = local_cases(definition)
    assert len(cases) == 15
    assert len({c.id for c in cases}) == 15
    assert {_layout(c) for c in cases} >= {"row", "column", "full"}
    assert {c.keep_dims for c in cases} == {True, False}
    assert {c.dtype for c in cases} == {"float32", "float16"}
    assert {c.distribution for c in cases} == {"symmetric", "positive"}
    in1_kinds = set()
    for c in cases:
        if c.input1 == c.input2:
            in1_kinds.add("full")
        elif c.input1 == (1,):
            in1_kinds.add("scalar")
        elif len(c.input1) == 2 and c.input1[0] == 1:
            in1_kinds.add("row")
        elif len(c.input1) == 2 and c.input1[1] == 1:
            in1_kinds.add("column")
    assert in1_kinds == {"full", "row", "column", "scalar"}
    extents = {n for c in cases for s in c.shapes for n in s}
    assert {1023, 4097} <= extents
    assert max(c.elements for c in cases) <= 1_100_000
    assert any(c.axes and min(c.axes) < 0 for c in cases)


def test_a_large_positive_full_reduction_exists(definition: OperatorDefinition) -> None:
    """The case that separates a sequential float32 sum from a correct one."""
    big = [
        c
        for c in local_cases(definition)
        if _layout(c) == "full"
        and c.dtype == "float32"
        and c.distribution == "positive"
        and c.elements >= 1_000_000
    ]
    assert big


def test_perf_cases(definition: OperatorDefinition) -> None:
    cases = perf_cases(definition)
    assert [c.id for c in cases] == list(definition.cases.perf)
    assert [_layout(c) for c in cases] == ["row", "column", "full"]
    for c in cases:
        assert c.dtype == "float32"
        assert 3_900_000 <= c.elements <= 4_500_000


def test_generation_is_deterministic(definition: OperatorDefinition) -> None:
    case = local_cases(definition)[14]
    first, second = generate_inputs(case), generate_inputs(case)
    for a, b, shape in zip(first, second, case.shapes, strict=True):
        assert a.shape == shape and a.dtype == np.float32
        assert np.array_equal(a, b)
    reseeded = generate_inputs(case.model_copy(update={"seed": case.seed + 1}))
    assert not np.array_equal(first[2], reseeded[2])


def test_distributions(definition: OperatorDefinition) -> None:
    by_id = {c.id: c for c in local_cases(definition)}
    positive = generate_inputs(by_id["c12_col_keep_pos_f16"])
    assert all(a.dtype == np.float16 and a.min() >= 0 and a.max() <= 1 for a in positive)
    symmetric = generate_inputs(by_id["c01_row_f32"])
    assert all(a.min() < -0.99 and a.max() > 0.99 for a in symmetric)


def test_output_shapes() -> None:
    case = CaseSpec(
        id="x",
        input0=(1, 1, 3),
        input1=(1, 8, 1),
        input2=(2, 8, 3),
        dtype="float16",
        axes=(0,),
        keep_dims=True,
        distribution="symmetric",
        seed=0,
    )
    assert case.output0_shape == (1, 8, 3)
    assert case.product_shape == (2, 8, 3)
    assert case.output1_shape == (1, 8, 3)
    dropped = case.model_copy(update={"keep_dims": False, "axes": (-1, 0)})
    assert dropped.reduce_axes == (0, 2)
    assert dropped.output1_shape == (8,)
    full = case.model_copy(update={"keep_dims": False, "axes": ()})
    assert full.output1_shape == ()


def test_a_case_file_is_parsed_once_per_content(tmp_path: Path) -> None:
    """Every evaluation asks for the cases several times: the same bytes give the same
    (frozen) specs without a new parse, and a rewritten file is read afresh, even with the
    same size and modification time."""
    path = tmp_path / "cases.toml"
    row = 'id = "{id}"\ninput0 = [4]\ninput1 = [4]\ninput2 = [4]\ndtype = "float32"\n'
    row += 'distribution = "symmetric"\nseed = 1\n'
    path.write_text("[[local]]\n" + row.format(id="aa"))
    first = load_case_file(path)
    second = load_case_file(path)
    assert second == first and second["local"][0] is first["local"][0]
    second["local"] = ()  # the caller's own dict: the next load is untouched
    stat = path.stat()
    path.write_text("[[local]]\n" + row.format(id="bb"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert [c.id for c in load_case_file(path)["local"]] == ["bb"]
    path.write_text("[[local]]\n" + row.format(id="aa"))
    assert load_case_file(path)["local"][0] is first["local"][0]
