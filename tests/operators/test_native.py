"""Compile the template and the fixture kernels with real gcc and run the harness natively."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from justkernel.operators import (
    InputPack,
    OperatorDefinition,
    build_project,
    check_pack_outputs,
    compile_steps,
    run_harness,
    run_pack,
    static_check,
)

from .conftest import make_project

COLUMN_CASES = {
    "c03_col_f32",
    "c04_col_keep_pos_f32",
    "c07_in1_row_col_f32",
    "c12_col_keep_pos_f16",
}
Harness = Callable[[str | None], Path]


def _run_all(harness: Path, pack: InputPack, out: Path) -> tuple[dict[str, bool], int]:
    """Run every local case; return pass/fail per case and the summed kernel time."""
    runs = run_pack(harness, pack, out)
    assert all(r.ok for r in runs), [(r.case_id, r.status, r.stderr) for r in runs if not r.ok]
    checks = check_pack_outputs(pack, out)
    kernel_ns = sum(r.run_info()["min_kernel_ns"] for r in runs)
    return {c.case_id: c.passed for c in checks}, kernel_ns


def test_compile_steps_are_exact(definition: OperatorDefinition, tmp_path: Path) -> None:
    project = definition.project_dir
    steps = compile_steps(project, project / "build", definition)
    assert [s.name for s in steps] == ["kernel", "tiling", "harness", "link"]
    flags = ["-O2", "-std=c11", "-fno-tree-loop-distribute-patterns", "-ffp-contract=off"]
    assert list(steps[0].argv) == [
        "gcc",
        *flags,
        "-Iinclude",
        "-c",
        "op_kernel/cmg_kernel.c",
        "-o",
        "build/cmg_kernel.o",
    ]
    assert list(steps[3].argv) == [
        "gcc",
        "build/harness.o",
        "build/cmg_tiling.o",
        "build/cmg_kernel.o",
        "-o",
        "build/harness",
        "-lm",
    ]
    assert all(s.cwd == project.resolve() for s in steps)


def test_baseline_passes_every_case(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    passed, _ = _run_all(variant_harness(None), local_pack, tmp_path)
    assert all(passed.values()), [k for k, v in passed.items() if not v]


def test_fast_variant_passes_and_is_faster(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    passed, fast_ns = _run_all(variant_harness("fast_fused_blocked"), local_pack, tmp_path / "f")
    assert all(passed.values()), [k for k, v in passed.items() if not v]
    _, base_ns = _run_all(variant_harness(None), local_pack, tmp_path / "b")
    assert fast_ns * 3 < base_ns, (fast_ns, base_ns)


def test_wrong_output_fails_the_column_cases(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    passed, _ = _run_all(variant_harness("wrong_output"), local_pack, tmp_path)
    assert {k for k, v in passed.items() if not v} == COLUMN_CASES


def test_sequential_float_sum_fails_only_the_big_positive_full_reduction(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    passed, _ = _run_all(variant_harness("sequential_f32_sum"), local_pack, tmp_path)
    assert {k for k, v in passed.items() if not v} == {"c05_full_pos_f32"}
    check = check_pack_outputs(local_pack, tmp_path, ("c05_full_pos_f32",))[0]
    out1 = check.outputs[1]
    assert out1.elements == 1 and out1.first_failures == (0,) and out1.max_rel_error > 1e-4


def test_guard_violation_exits_86(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    case_id = "c15_small_bcast_f32"
    run = run_harness(variant_harness("guard_overflow"), local_pack.case_dir(case_id), tmp_path)
    assert run.returncode == 86
    assert run.status == "guard_violation"
    assert "output0 post-guard" in run.stderr
    assert not (tmp_path / "output0.bin").exists()


def test_reps_and_run_info(variant_harness: Harness, local_pack: InputPack, tmp_path: Path) -> None:
    run = run_harness(
        variant_harness("fast_fused_blocked"),
        local_pack.case_dir("c09_in1_scalar_full_f32"),
        tmp_path,
        reps=3,
        flush_bytes=0,
    )
    assert run.ok, run.stderr
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["case"] == "c09_in1_scalar_full_f32"
    assert info["reps"] == 3 and len(info["kernel_ns"]) == 3
    assert info["min_kernel_ns"] == min(info["kernel_ns"])


def test_harness_rejects_bad_cases(
    variant_harness: Harness, local_pack: InputPack, tmp_path: Path
) -> None:
    harness = variant_harness(None)
    source = local_pack.case_dir("c15_small_bcast_f32")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("case.txt", "input0.bin", "input1.bin"):
        (broken / name).write_bytes((source / name).read_bytes())
    (broken / "input2.bin").write_bytes((source / "input2.bin").read_bytes()[:-4])
    short = run_harness(harness, broken, tmp_path / "o1")
    assert short.status == "bad_case" and "input2.bin" in short.stderr
    text = (source / "case.txt").read_text().replace("input2 2 3 7", "input2 2 4 7")
    (broken / "case.txt").write_text(text)
    rejected = run_harness(harness, broken, tmp_path / "o2")
    assert rejected.status == "tiling_rejected"
    usage = subprocess.run([str(harness)], capture_output=True, check=False)
    assert usage.returncode == 2


STATIC_BAD = {
    "io": ('#include <stdio.h>\nvoid confusion_mul_grad(void) { puts("hi"); }\n', "puts"),
    "global": ("int helper(int x) { return x; }\nvoid confusion_mul_grad(void) {}\n", "helper"),
    "ctor": (
        "static volatile int armed;\n"
        "__attribute__((constructor)) static void early(void) { armed = 1; }\n"
        "void confusion_mul_grad(void) { armed = 2; }\n",
        ".init_array",
    ),
}


@pytest.mark.parametrize("kind", sorted(STATIC_BAD))
def test_static_check_rejects(kind: str, definition: OperatorDefinition, tmp_path: Path) -> None:
    source, expected = STATIC_BAD[kind]
    (tmp_path / "k.c").write_text(source)
    flags = list(definition.build.cflags)
    subprocess.run(["gcc", *flags, "-c", "k.c", "-o", "k.o"], cwd=tmp_path, check=True)
    problems = static_check(tmp_path / "k.o", "confusion_mul_grad", definition)
    assert any(expected in p for p in problems), problems


def test_build_stops_on_a_static_problem(definition: OperatorDefinition, tmp_path: Path) -> None:
    project = make_project(definition, None, tmp_path / "project")
    kernel = project / "op_kernel" / "cmg_kernel.c"
    kernel.write_text(kernel.read_text().replace("static int64_t offset_of", "int64_t offset_of"))
    result = build_project(project, tmp_path / "build", definition)
    assert not result.ok and result.failed_step == "static_check"
    assert any("offset_of" in p for p in result.problems)
    broken = kernel.read_text().replace("void confusion_mul_grad(", "void confusion_mul_grad(int,")
    kernel.write_text(broken)
    result = build_project(project, tmp_path / "build2", definition)
    assert not result.ok and result.failed_step == "kernel" and "error" in result.log


HALF_PROBE = r"""
#include <stdio.h>
#include "cmg_half.h"
int main(int argc, char** argv) {
    FILE* in = fopen(argv[1], "rb");
    FILE* out = fopen(argv[2], "wb");
    float f;
    while (fread(&f, 4, 1, in) == 1) {
        cmg_half h = cmg_float_to_half(f);
        float back = cmg_half_to_float(h);
        fwrite(&h, 2, 1, out);
        fwrite(&back, 4, 1, out);
    }
    fclose(out);
    return 0;
}
"""


def test_half_helpers_match_numpy(definition: OperatorDefinition, tmp_path: Path) -> None:
    """Round to nearest even, subnormals, overflow and NaN, against numpy's float16."""
    (tmp_path / "probe.c").write_text(HALF_PROBE)
    include = definition.project_dir / "include"
    flags = list(definition.build.cflags)
    subprocess.run(
        ["gcc", *flags, f"-I{include}", "probe.c", "-o", "probe"], cwd=tmp_path, check=True
    )
    every_half = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate(
        [
            every_half.astype(np.float32),
            random_bits.view(np.float32),
            np.float32([65504, 65519.99, 65520, 1e-8, 2.9802322e-08, 2.9802326e-08, -0.0]),
        ]
    )
    values.astype("<f4").tofile(tmp_path / "in.bin")
    subprocess.run(["./probe", "in.bin", "out.bin"], cwd=tmp_path, check=True)
    record = np.dtype([("h", "<u2"), ("f", "<f4")])
    got = np.fromfile(tmp_path / "out.bin", dtype=record)
    with np.errstate(over="ignore"):
        expected = values.astype(np.float16)
    nan = np.isnan(expected)
    assert np.array_equal(got["h"][~nan], expected[~nan].view(np.uint16))
    assert np.isnan(got["h"][nan].view(np.float16)).all()
    assert np.array_equal(got["f"][~nan], expected[~nan].astype(np.float32))
