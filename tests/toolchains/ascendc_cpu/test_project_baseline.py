"""The ConfusionMulGrad Ascend C project (msopgen layout), its baseline and two failing
variants, through the real `ascendc-cpu` toolchain (real g++, real sandbox) (issue 12, point 1
and Must show):

- the read-only files are the official template's, byte for byte;
- the baseline passes all 15 local cases and is modelled on the 3 perf cases;
- wrong_broadcast (an operand broadcast along the row, [M, 1], read as one scalar) fails
  exactly the cases that have such an operand;
- f16_half_accumulate (float16 products and sums in half) fails the precision standard on the
  long float16 reductions, on output1 only.

The jobs run in one module fixture, two at a time (compiling dominates); the baseline's full
job is the one the other ascendc-cpu tests share (`toolchain_support.baseline_receipt`), and a
two-case probe of the baseline builds the harnesses the direct calls below run.
"""

from __future__ import annotations

import asyncio
import filecmp
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import CaseOutcome, JobKind, Receipt, Status
from justkernel.operators import load_operator, local_cases, perf_cases
from justkernel.paths import resources_dir
from justkernel.toolchains import check_tree
from justkernel.toolchains.ascendc_cpu.run import HARNESS
from justkernel.toolchains.sandbox.checked import run_checked
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt
from tests.workers.test_evaluator_shared import fresh_dir, packs

pytestmark = pytest.mark.timeout(300)

PROJECT = resources_dir() / "operators" / "confusion_mul_grad" / "ascendc"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OFFICIAL = FIXTURES / "official_template" / "confusion_mul_grad"
VARIANTS = FIXTURES / "ascendc"
PERF_CASES = tuple(c.id for c in perf_cases(load_operator()))
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
    """The baseline project with the variant's edits applied: a variant is kept as the few
    lines it changes, so it follows the baseline instead of being a stale copy of it."""
    dest = fresh_dir(f"cmg-{name}") / "project"
    shutil.copytree(PROJECT, dest)
    spec = tomllib.loads((VARIANTS / name / "kernel_edits.toml").read_text())
    target = dest / spec["file"]
    text = target.read_text()
    for edit in spec["edit"]:
        assert text.count(edit["old"]) == 1, f"{name}: an edit no longer applies to the baseline"
        text = text.replace(edit["old"], edit["new"], 1)
    target.write_text(text)
    return dest


def failing(receipt: Receipt) -> set[str]:
    return {c.case_id for c in receipt.cases if not c.passed}


@dataclass(frozen=True)
class Jobs:
    baseline: Receipt
    wrong_broadcast: Receipt
    f16_half_accumulate: Receipt
    baseline_work: Path  # the baseline probe's work folder (build/link_f32/harness)


@pytest.fixture(scope="module")
def jobs() -> Iterator[Jobs]:
    cases = tuple(c.id for c in local_cases(load_operator()))
    f16 = tuple(c.id for c in local_cases(load_operator()) if c.dtype == "float16")
    f32 = tuple(c for c in cases if c not in f16)
    assert len(cases) == 15 and len(f16) == 4

    async def all_jobs() -> list[Receipt]:
        gate = asyncio.Semaphore(2)  # two jobs at a time: the test machine has two cores

        async def one(
            src: Path, ids: tuple[str, ...], perf: tuple[str, ...] = (), work: Path | None = None
        ) -> Receipt:
            async with gate:
                return await run(src, ids, perf, work)

        async def shared() -> Receipt:
            async with gate:
                return await baseline_receipt()

        return await asyncio.gather(
            shared(),
            one(PROJECT, (f32[0], f16[0]), (), work),  # both harnesses, kept in `work`
            one(variant("wrong_broadcast"), cases),
            one(variant("f16_half_accumulate"), f16),  # one kernel build: float16 only
        )

    work = fresh_dir("cmg-baseline") / "w"
    baseline, probe, wrong, half = asyncio.run(all_jobs())
    assert probe.status is Status.PROBE_PASSED, probe.detail
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


# (input0, input1, input2, axes): invalid calls the tiling must refuse (GRAPH_FAILED, exit 5).
REFUSED = {
    "axis_out_of_range": ([4, 5], [4, 5], [4, 5], [2]),
    "negative_axis_out_of_range": ([4, 5], [4, 5], [4, 5], [-3]),
    "repeated_axis": ([4, 5], [4, 5], [4, 5], [1, -1]),
    "input1_input2_not_broadcastable": ([4, 5], [4, 5], [3, 5], [0]),
    "input0_input1_not_broadcastable": ([3, 5], [4, 5], [4, 5], [0]),
}
# (input0, input1, input2, axes, keep_dims, dtype): valid calls no local case makes (hidden
# cases use other shapes): ranks 0 and 8, input0 of higher rank than the product space, an
# axis of extent 1, a kept row longer than one UB tile with a broadcast column, interleaved
# kept and reduced dims, float16 with a scalar operand, every operand broadcast to a 0-d sum.
UNCOVERED = {
    "rank0": ([], [], [], [], False, "float32"),
    "rank8": (
        [2, 1, 2, 1, 2, 1, 2, 3],
        [1, 2, 1, 2, 1, 2, 1, 3],
        [2, 2, 2, 2, 2, 2, 2, 1],
        [0, 3, -1],
        True,
        "float32",
    ),
    "input0_higher_rank": ([3, 4, 5], [5], [4, 5], [0], False, "float32"),
    "extent1_axis": ([7, 1, 9], [7, 1, 9], [7, 1, 9], [1], False, "float32"),
    "long_kept_row_column_input1": ([3, 5000], [3, 1], [3, 5000], [0], True, "float32"),
    "interleaved": ([4, 5, 6, 7], [4, 5, 6, 7], [4, 5, 6, 7], [0, 2], False, "float32"),
    "all_broadcast_0d": ([2, 1, 3], [1, 4, 1], [4, 3], [], False, "float32"),
    "f16_scalar_input2": ([64, 33], [64, 33], [1], [1], False, "float16"),
    "f16_full_keep": ([33, 65], [65], [33, 65], [], True, "float16"),
}


def shape_line(s: list[int] | tuple[int, ...]) -> str:
    return " ".join(str(v) for v in (len(s), *s))


def golden(arrays: list[np.ndarray], axes: list[int], keep: bool) -> list[np.ndarray]:
    """The spec's reference: float64 products and sums, rounded once to the dtype."""
    a0, a1, a2 = (a.astype(np.float64) for a in arrays)
    out1 = np.sum(a1 * a2, axis=tuple(axes) if axes else None, keepdims=keep)
    return [(a0 * a1).astype(arrays[0].dtype), np.asarray(out1).astype(arrays[0].dtype)]


async def call(
    jobs: Jobs,
    name: str,
    shapes: list,
    axes: list[int],
    keep: bool,
    dtype: str,
    refused: bool = False,
) -> tuple[int | None, Path, list[np.ndarray]]:
    """One call of the baseline's own harness in the sandbox on a case folder written here.
    A refused call has no output shapes; the inputs' stand in (they only size the buffers)."""
    folder = fresh_dir(f"cmg-call-{name}")
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    for i, a in enumerate(arrays):
        a.tofile(folder / f"input{i}.bin")
        (folder / f"input{i}.bin").chmod(0o644)
    want = [np.empty(shapes[0]), np.empty(shapes[1])] if refused else golden(arrays, axes, keep)
    lines = [
        "cmg_case 1",
        f"id {name}",
        f"dtype {dtype}",
        *(f"input{i} {shape_line(s)}" for i, s in enumerate(shapes)),
        f"axes {shape_line(axes)}",
        f"keep_dims {int(keep)}",
        *(f"output{i} {shape_line(w.shape)}" for i, w in enumerate(want)),
    ]
    (folder / "case.txt").write_text("\n".join(lines) + "\n")
    (folder / "case.txt").chmod(0o644)
    link = "link_f16" if dtype == "float16" else "link_f32"
    harness = jobs.baseline_work / "build" / link / "harness"
    assert harness.is_file(), harness
    out = fresh_dir(f"cmg-out-{name}")
    r = await run_checked(
        [HARNESS, "/sandbox/in", "/sandbox/out"],
        ro_binds={"bin/harness": harness, "in": folder},
        rw_dir=out,
        limits=toolchain().limits.case,
    )
    return r.exit_code, out, want


async def test_the_tiling_refuses_invalid_calls(jobs: Jobs) -> None:
    """Bad axes and shapes that do not broadcast are refused by the tiling: harness exit 5."""
    for name, (s0, s1, s2, axes) in REFUSED.items():
        code, _, _ = await call(jobs, name, [s0, s1, s2], axes, False, "float32", refused=True)
        assert code == 5, (name, code)


async def test_the_baseline_is_right_on_calls_no_local_case_makes(jobs: Jobs) -> None:
    """Within the precision standard, with zero failures (every output here is small)."""
    for name, (s0, s1, s2, axes, keep, dtype) in UNCOVERED.items():
        code, out, want = await call(jobs, name, [s0, s1, s2], axes, keep, dtype)
        assert code == 0, (name, code, sorted(p.name for p in out.iterdir()))
        tol = 1e-3 if dtype == "float16" else 1e-4
        for i, w in enumerate(want):
            got = np.fromfile(out / f"output{i}.bin", dtype=dtype)
            assert got.size == w.size, (name, i)
            g, e = got.astype(np.float64), w.ravel().astype(np.float64)
            bad = np.flatnonzero(~(np.abs(g - e) <= tol + tol * np.abs(e)))
            assert bad.size == 0, (name, f"output{i}", bad[:5], g[bad[:5]], e[bad[:5]])
