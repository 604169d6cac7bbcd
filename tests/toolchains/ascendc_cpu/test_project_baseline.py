"""The ConfusionMulGrad Ascend C project (msopgen layout), its baseline and two failing
variants, through the real `ascendc-cpu` toolchain (real g++, real sandbox) (issue 12, point 1
and Must show):

- the read-only files are the official template's, byte for byte;
- the baseline passes all 15 local cases and is modelled on the 3 perf cases;
- wrong_broadcast (an operand broadcast along the row, [M, 1], read as one scalar) fails
  exactly the cases that have such an operand;
- f16_half_accumulate (float16 products and sums in half) fails the precision standard on the
  long float16 reductions, on output1 only.

The three jobs run in one module fixture, two at a time (compiling dominates).
"""

from __future__ import annotations

import asyncio
import filecmp
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from justkernel.operators import load_operator, local_cases
from justkernel.paths import resources_dir
from justkernel.toolchains import JobSpec, check_tree
from justkernel.toolchains.ascendc_cpu.run import HARNESS
from justkernel.toolchains.cpu_sandbox import run_checked
from justkernel.workers.receipts import CaseOutcome, JobKind, Receipt, Status
from tests.toolchains.ascendc_cpu.ladder_support import PERF_CASES, toolchain
from tests.workers.test_evaluator_shared import fresh_dir, packs

pytestmark = pytest.mark.timeout(300)

PROJECT = resources_dir() / "operators" / "confusion_mul_grad" / "ascendc"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OFFICIAL = FIXTURES / "official_template" / "confusion_mul_grad"
VARIANTS = FIXTURES / "ascendc"
# What msopgen generates and the contest fixes; the team writes op_host/*.cpp|.h, op_kernel/*.cpp.
READ_ONLY = (
    "CMakeLists.txt",
    "CMakePresets.json",
    "build.sh",
    "examples/CMakeLists.txt",
    "examples/test_aclnn_confusion_mul_grad.cpp",
    "op_host/CMakeLists.txt",
    "op_kernel/CMakeLists.txt",
)
WRITTEN = (
    "op_host/confusion_mul_grad.cpp",
    "op_host/confusion_mul_grad_tiling.h",
    "op_kernel/confusion_mul_grad.cpp",
)
# c08 input1 [513,1], c14 input1 [1,64,1], c15 input1 [5,3,1] (and input0 [5,1,7] there) are
# broadcast along the row; a row (1, N) operand (c07) and a true scalar (1,) (c09) stay right.
WRONG_BROADCAST_FAILS = {"c08_in1_col_row_keep_f32", "c14_bcast3d_f16", "c15_small_bcast_f32"}
# Every float16 local case is a long reduction (1,023 to 523,775 terms per output element).
HALF_ACCUMULATE_FAILS = {"c11_row_f16", "c12_col_keep_pos_f16", "c13_full_f16", "c14_bcast3d_f16"}


async def run(
    src: Path, case_ids: tuple[str, ...], perf: tuple[str, ...] = (), work: Path | None = None
) -> Receipt:
    """One job straight through the real toolchain (no result cache: it really runs)."""
    tc = toolchain()
    work = work or fresh_dir("cmg-work") / "w"
    pack_set = await packs(JobKind.FULL if perf else JobKind.PROBE)
    job = JobSpec(
        operator=tc.definition.name,
        kind=JobKind.FULL if perf else JobKind.PROBE,
        case_ids=case_ids,
        perf_case_ids=perf,
        source_tree_hash=check_tree(src, tc.definition).tree_hash,
        input_packs={role: p.pack_hash for role, p in pack_set.items()},
        toolchain_id=tc.id,
        toolchain_version=tc.version,
    )
    return await tc.run(job, src, pack_set, work, slot=0, parallelism=2)


def variant(name: str) -> Path:
    """The baseline project with the variant's files laid over it."""
    dest = fresh_dir(f"cmg-{name}") / "project"
    shutil.copytree(PROJECT, dest)
    shutil.copytree(VARIANTS / name, dest, dirs_exist_ok=True)
    return dest


def failing(receipt: Receipt) -> set[str]:
    return {c.case_id for c in receipt.cases if not c.passed}


@dataclass(frozen=True)
class Jobs:
    baseline: Receipt
    wrong_broadcast: Receipt
    f16_half_accumulate: Receipt
    baseline_work: Path  # the baseline job's work folder (build/link_f32/harness)


@pytest.fixture(scope="module")
def jobs() -> Iterator[Jobs]:
    cases = tuple(c.id for c in local_cases(load_operator()))
    f16 = tuple(c.id for c in local_cases(load_operator()) if c.dtype == "float16")
    assert len(cases) == 15 and len(f16) == 4

    async def all_three() -> list[Receipt]:
        gate = asyncio.Semaphore(2)  # two jobs at a time: the test machine has two cores

        async def one(
            src: Path, ids: tuple[str, ...], perf: tuple[str, ...] = (), work: Path | None = None
        ) -> Receipt:
            async with gate:
                return await run(src, ids, perf, work)

        return await asyncio.gather(
            one(PROJECT, cases, PERF_CASES, work),
            one(variant("wrong_broadcast"), cases),
            one(variant("f16_half_accumulate"), f16),  # one kernel build: float16 only
        )

    work = fresh_dir("cmg-baseline") / "w"
    baseline, wrong, half = asyncio.run(all_three())
    yield Jobs(baseline, wrong, half, work)


def test_the_read_only_files_are_the_official_templates_byte_for_byte() -> None:
    official, ours = (
        sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        for root in (OFFICIAL, PROJECT)
    )
    assert ours == official  # the same file set: nothing added, nothing missing
    assert set(READ_ONLY) | set(WRITTEN) == set(official)
    for rel in READ_ONLY:
        assert filecmp.cmp(PROJECT / rel, OFFICIAL / rel, shallow=False), rel
    for rel in WRITTEN:  # the baseline is ours, not the template's last-axis sketch
        assert not filecmp.cmp(PROJECT / rel, OFFICIAL / rel, shallow=False), rel
    # the toolchain evaluates this folder as the operator's Ascend C template
    assert toolchain().definition.project_dir.resolve() == PROJECT.resolve()


def test_the_baseline_passes_every_local_case_and_is_modelled(jobs: Jobs) -> None:
    receipt = jobs.baseline
    assert receipt.status is Status.MEASURED, receipt.detail
    assert len(receipt.cases) == 15
    assert all(c.passed and c.outcome is CaseOutcome.PASSED for c in receipt.cases), [
        (c.case_id, c.outcome, c.detail) for c in receipt.cases if not c.passed
    ]
    assert [c.case_id for c in receipt.cycles] == list(PERF_CASES)
    for c in receipt.cycles:
        assert c.check.passed, (c.case_id, c.check.detail)
        assert c.est_cycles is not None and c.est_cycles > 0
        assert c.pipeline is not None and c.pipeline.bound_pipe
        assert c.pipeline.block_dim == 1  # the baseline is single-core by design
    assert receipt.total_est_cycles == sum(c.est_cycles or 0 for c in receipt.cycles)


def test_a_kernel_wrong_on_one_broadcast_pattern_fails_exactly_its_cases(jobs: Jobs) -> None:
    receipt = jobs.wrong_broadcast
    assert receipt.status is Status.INCORRECT, receipt.detail
    assert failing(receipt) == WRONG_BROADCAST_FAILS
    for c in receipt.cases:
        if c.case_id in WRONG_BROADCAST_FAILS:
            assert c.outcome is CaseOutcome.INCORRECT
            assert not c.outputs[0].passed  # output0 = input0 * input1 uses the wrong scalar


def test_a_float16_kernel_accumulating_in_half_fails_the_long_reductions(jobs: Jobs) -> None:
    receipt = jobs.f16_half_accumulate
    assert receipt.status is Status.INCORRECT, receipt.detail
    assert failing(receipt) == HALF_ACCUMULATE_FAILS
    for c in receipt.cases:
        out0, out1 = c.outputs
        assert c.outcome is CaseOutcome.INCORRECT
        # output0 is one product rounded once either way; the half sums break output1
        assert out0.passed and not out1.passed, (c.case_id, out0.message, out1.message)


# (input0, input1, input2, axes): each is an invalid call the tiling must refuse (GRAPH_FAILED,
# harness exit 5), except the last, a valid call with every operand broadcast and a 0-d output.
CALLS = {
    "axis_out_of_range": ([4, 5], [4, 5], [4, 5], [2]),
    "negative_axis_out_of_range": ([4, 5], [4, 5], [4, 5], [-3]),
    "repeated_axis": ([4, 5], [4, 5], [4, 5], [1, -1]),
    "input1_input2_not_broadcastable": ([4, 5], [4, 5], [3, 5], [0]),
    "input0_input1_not_broadcastable": ([3, 5], [4, 5], [4, 5], [0]),
    "valid_full_reduction_to_0d": ([2, 1, 3], [1, 4, 1], [4, 3], []),
}


def case_folder(name: str, shapes: list[list[int]], axes: list[int]) -> tuple[Path, list]:
    """A case folder in the harness's format (case.txt + raw inputs) and the inputs. An invalid
    call has no output shapes; the inputs' stand in (the harness only sizes buffers by them)."""
    folder = fresh_dir(f"cmg-call-{name}")
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    for i, a in enumerate(arrays):
        a.tofile(folder / f"input{i}.bin")
        (folder / f"input{i}.bin").chmod(0o644)
    if name.startswith("valid"):
        outputs = [np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])), ()]
    else:
        outputs = [shapes[0], shapes[1]]

    def shape(s: list[int] | tuple[int, ...]) -> str:
        return " ".join(str(v) for v in (len(s), *s))

    lines = [
        "cmg_case 1",
        f"id {name}",
        "dtype float32",
        *(f"input{i} {shape(s)}" for i, s in enumerate(shapes)),
        f"axes {shape(axes)}",
        "keep_dims 0",
        *(f"output{i} {shape(s)}" for i, s in enumerate(outputs)),
    ]
    (folder / "case.txt").write_text("\n".join(lines) + "\n")
    (folder / "case.txt").chmod(0o644)
    return folder, arrays


async def test_the_tiling_refuses_invalid_calls(jobs: Jobs) -> None:
    """Bad axes and shapes that do not broadcast are refused by the tiling (exit 5), in the
    sandbox with the baseline's own harness; a valid all-broadcast call gives numpy's answer."""
    harness = jobs.baseline_work / "build" / "link_f32" / "harness"
    assert harness.is_file()
    for name, (s0, s1, s2, axes) in CALLS.items():
        case, arrays = case_folder(name, [s0, s1, s2], axes)
        out = fresh_dir(f"cmg-out-{name}")
        r = await run_checked(
            [HARNESS, "/sandbox/in", "/sandbox/out"],
            ro_binds={"bin/harness": harness, "in": case},
            rw_dir=out,
            limits=toolchain().limits.case,
        )
        if not name.startswith("valid"):
            assert r.exit_code == 5, (name, r.status, r.exit_code, r.stderr.text[-300:])
            continue
        assert r.exit_code == 0, (name, r.status, r.stderr.text[-300:])
        a0, a1, a2 = (a.astype(np.float64) for a in arrays)
        out0 = np.fromfile(out / "output0.bin", dtype=np.float32)
        out1 = np.fromfile(out / "output1.bin", dtype=np.float32)
        np.testing.assert_allclose(out0, (a0 * a1).ravel(), rtol=1e-6, atol=0)
        assert out1.shape == (1,)
        np.testing.assert_allclose(out1[0], (a1 * a2).sum(), rtol=1e-5, atol=1e-6)
