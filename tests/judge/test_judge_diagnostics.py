"""Why a submission failed reaches its result (issue #16, 4). A compile that runs out of its
wall-clock limit (what a loaded host does to the judge's from-scratch build: a local pass
reused the team's cached objects) printed nothing, so its result said `compile_failed` with
empty diagnostics; the receipt's own line ("kernel: the compiler ran out of time") is the
reason and is passed on now. Real cpu toolchain, real sandbox, the judge's evaluation."""

from __future__ import annotations

import uuid
from pathlib import Path

from justkernel.judge.eval import JudgeEvaluation, TargetEvaluator, toolchain_cache_dir
from justkernel.judge.hidden_cases import load_or_create_hidden_cases
from justkernel.judge.paths import JudgeFolder
from justkernel.operators import load_operator
from justkernel.store.blobs import BlobStore
from justkernel.toolchains.cpu import CpuLimits, CpuToolchain
from justkernel.toolchains.sandbox.types import SandboxLimits
from justkernel.workers.evaluator import CaseSets, Evaluator
from justkernel.workers.pool import LocalPool
from tests.support.judge import work_root
from tests.support.labs import open_folder


async def test_a_compile_out_of_time_names_why_in_the_diagnostics() -> None:
    operator = load_operator()
    folder = JudgeFolder.open(open_folder("jk-diag-") / "judge", work_root=work_root())
    evaluation = JudgeEvaluation.create(
        folder, operator, load_or_create_hidden_cases(folder.root, operator)
    )
    cache = toolchain_cache_dir(evaluation.work, "cpu")
    # a compile that needs far more than its wall-clock limit on any host (a busy host, made
    # certain): a constant expression of 2^22 terms keeps gcc busy for seconds
    limits = CpuLimits(compile=SandboxLimits(wall_seconds=1.0, cpu_seconds=60, processes=32))
    toolchain = CpuToolchain(operator, cache_dir=cache, limits=limits)
    evaluator = Evaluator(
        evaluation.settings,
        LocalPool(slots=1),
        toolchain,
        BlobStore(evaluation.settings.blobs_dir),
        cases=CaseSets(local=evaluation.hidden, perf=evaluation.hidden),
    )
    view = operator.for_toolchain("cpu")
    evaluation.targets["cpu"] = TargetEvaluator("cpu", view, evaluator)
    kernel = Path(view.project_dir) / "op_kernel" / "cmg_kernel.c"
    slow = [f"/* out of time: {uuid.uuid4().hex} */", "#define JK_T0 (1)"]  # never cached before
    slow += [f"#define JK_T{i} (JK_T{i - 1} + JK_T{i - 1})" for i in range(1, 23)]
    slow.append("int jk_slow_to_compile(void) { return JK_T22; }")
    marker = ("\n" + "\n".join(slow) + "\n").encode()
    try:
        result = await evaluation.evaluate(
            {"op_kernel/cmg_kernel.c": kernel.read_bytes() + marker}, toolchain="cpu"
        )
    finally:
        await evaluation.close()
    assert result["verdict"] == "fail" and result["outcome"] == "compile_failed"
    assert {p["outcome"] for p in result["points"]} == {"compile_failed"}
    assert result["diagnostics"], "a failed compile with no words: the table showed fail — —"
    assert "ran out of time" in result["diagnostics"][0]
    assert result["evaluation"]["attempts"] == 2  # retried once: the time limit may be load
