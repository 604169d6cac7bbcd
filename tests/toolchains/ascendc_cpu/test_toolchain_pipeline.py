"""The ascendc-cpu toolchain end to end with the real sandbox and g++: the baseline measured
through the evaluator (cycles, per-pipe figures, trace blob), the same cycles from another
folder, each refusal at its stage (tree, source scan, missing API, forbidden symbol), the
api_misuse receipt, and `justkernel evaluate --toolchain ascendc-cpu` printing the table."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from justkernel.cli.evaluate_cmd import render_receipt
from justkernel.cli.main import app
from justkernel.core.pipeline_trace import TRACE_SUFFIX, load_trace
from justkernel.core.receipts import CaseOutcome, Receipt, Status
from tests.toolchains.ascendc_cpu.ladder_support import (
    KERNEL,
    PERF_CASES,
    marked_site,
    misuse_project,
    run,
    toolchain,
)
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt, blob, copy_template
from tests.workers.test_evaluator_shared import SMALL_CASE, shared_settings

pytestmark = pytest.mark.timeout(300)
PIPES = ("MTE2", "V", "MTE3", "S")
MUL_LINE = "Mul(out, in, in[tile], count);"


def patched(prefix: str, new: str, head: str = "") -> tuple[Path, int]:
    """A copy of the template whose kernel's one MUL_LINE is replaced by `new` (and `head`
    put first); returns the project and the (original) line of the replacement."""
    project = copy_template(prefix)
    kernel = project / KERNEL
    text = kernel.read_text()
    assert text.count(MUL_LINE) == 1
    line = text[: text.index(MUL_LINE)].count("\n") + 1
    kernel.write_text(head + text.replace(MUL_LINE, new))
    return project, line


def traces(r: Receipt) -> dict[str, str]:
    return {
        ref.name: ref.sha256 for c in r.cycles for ref in c.logs if ref.name.endswith(TRACE_SUFFIX)
    }


async def test_the_baseline_is_measured_with_per_pipe_figures_and_a_trace() -> None:
    r = await baseline_receipt()
    assert r.status is Status.MEASURED, r.detail
    assert len(r.cases) == 15 and all(c.outcome is CaseOutcome.PASSED for c in r.cases)
    assert r.executor.toolchain_id == "ascendc-cpu" and r.executor.valgrind is None
    assert r.cacheable and r.misuse is None
    assert [c.case_id for c in r.cycles] == list(PERF_CASES)
    for c in r.cycles:
        p = c.pipeline
        assert p is not None and c.check.passed and c.counters is None
        assert c.est_cycles == p.total > 0 and p.soc == "ascend910b"
        assert set(PIPES) <= set(p.pipes) and p.bound_pipe in p.pipes
        slowest = max(p.cores, key=lambda core: core.makespan)
        assert slowest.makespan == p.total and len(p.cores) == p.block_dim
        bound = p.pipes[p.bound_pipe]
        assert bound.busy == max(f.busy for f in p.pipes.values())
        for f in p.pipes.values():
            assert f.utilisation is not None and 0 <= f.utilisation <= 1
            assert f.utilisation == pytest.approx(f.busy / p.total, abs=1e-3)
        trace = load_trace(blob(traces(r)[f"{c.case_id}{TRACE_SUFFIX}"]))
        names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
        assert set(PIPES) <= names
        assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    assert r.total_est_cycles == sum(c.est_cycles or 0 for c in r.cycles)
    assert "modelled cycles over 3 perf cases" in r.detail
    compile_log = next(ref for ref in r.logs if ref.name == "compile.log")
    text = blob(compile_log.sha256).decode()
    assert "-DDTYPE_INPUT0=float" in text and "-DDTYPE_INPUT0=half" in text  # both dtypes built


async def test_the_same_source_gives_identical_cycles_from_another_folder() -> None:
    baseline = await baseline_receipt()
    other = await run(toolchain(), copy_template("second-folder"), (SMALL_CASE,), PERF_CASES)
    r = other.receipt
    assert r.status is Status.MEASURED, r.detail
    assert r.source_sha256 == baseline.source_sha256
    assert [c.model_dump(include={"case_id", "est_cycles", "pipeline"}) for c in r.cycles] == [
        c.model_dump(include={"case_id", "est_cycles", "pipeline"}) for c in baseline.cycles
    ]
    assert traces(r) == traces(baseline)  # the trace files are byte-identical too


async def test_a_changed_file_outside_op_host_and_op_kernel_is_refused() -> None:
    tc = toolchain()
    src = copy_template("tree")
    (src / "CMakeLists.txt").write_text("# edited\n")
    (src / "op_host" / "CMakeLists.txt").write_text("# edited too\n")
    (src / "extra.txt").write_text("not in the template\n")
    (src / "op_kernel" / "helper.h").write_text("// editable: allowed\n")
    r = (await run(tc, src)).receipt
    assert r.status is Status.STATIC_CHECK_FAILED and not r.cacheable
    assert r.compile is not None and r.compile.failed_step == "tree"
    assert sorted(r.compile.problems) == [
        "CMakeLists.txt: read_only file differs from the operator template",
        "extra.txt: extra read_only file outside the editable paths",
        "op_host/CMakeLists.txt: forbidden file differs from the operator template",
    ]
    assert r.cases == []


async def test_a_kernel_naming_the_cycle_model_is_refused_before_it_compiles() -> None:
    project, _ = patched("names-engine", f"jk::g_engine = nullptr; {MUL_LINE}")
    r = (await run(toolchain(), project)).receipt
    assert r.status is Status.STATIC_CHECK_FAILED
    assert r.compile is not None and r.compile.failed_step == "source_check"
    assert r.detail.startswith(f"{KERNEL}:") and "`jk` names the ascendc-cpu library" in r.detail
    assert any("`g_engine`" in p for p in r.compile.problems)
    assert r.durations.compile is not None and r.durations.compile < 5  # g++ never ran


async def test_a_missing_api_is_compile_failed_naming_it_and_only_float32_is_built() -> None:
    project, line = patched("missing-api", "Axpy(out, in, (T)1, count);")
    ran = await run(toolchain(), project)  # a probe on one float32 case
    r = ran.receipt
    assert r.status is Status.COMPILE_FAILED and r.cacheable
    assert r.compile is not None and r.compile.failed_step == "kernel_f32"
    assert r.detail == (
        f"kernel_f32: ascendc-cpu does not implement AscendC::Axpy (at {KERNEL}:{line})"
    )
    assert (ran.workdir / "build" / "kernel_f32").is_dir()
    assert not (ran.workdir / "build" / "kernel_f16").exists()  # no float16 case: no half build


async def test_a_kernel_that_could_write_its_own_results_is_refused() -> None:
    forged = 'if (count == 12345) { FILE* f = fopen("/sandbox/out/run.json", "w"); fclose(f); } '
    project, _ = patched("fopen", forged + MUL_LINE, head="#include <cstdio>\n")
    r = (await run(toolchain(), project)).receipt
    assert r.status is Status.STATIC_CHECK_FAILED
    assert r.compile is not None and r.compile.failed_step == "static_check"
    refs = {
        p.split(" references ")[1].split(",")[0] for p in r.compile.problems if "references" in p
    }
    assert refs == {"fopen", "fclose"}
    assert all(p.startswith("kernel_f32.o: references") for p in r.compile.problems)


async def test_api_misuse_is_a_receipt_of_its_own() -> None:
    tc = toolchain()
    src = misuse_project(tc, "ub_overflow")
    file, line = marked_site(src)
    r = (await run(tc, src)).receipt
    assert r.status is Status.API_MISUSE and not r.status.passed and r.cacheable
    assert r.misuse is not None
    assert (r.misuse.check, r.misuse.file, r.misuse.line) == ("ub_overflow", file, line)
    assert r.misuse.message and r.misuse.block == 0
    assert r.detail.startswith("api_misuse on 1 of 1: c01_row_f32 (ub_overflow at ")
    assert f"{file}:{line}" in r.detail
    case = r.cases[0]
    assert case.outcome is CaseOutcome.API_MISUSE and case.passed is False
    assert case.misuse == r.misuse and case.logs  # the harness's stderr is kept
    assert Receipt.model_validate_json(r.model_dump_json()) == r
    console_text = _render(r)
    assert "api_misuse" in console_text and f"ub_overflow at {file}:{line}" in console_text


def _render(r: Receipt) -> str:
    from rich.console import Console

    console = Console(width=160, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_receipt(r))
    return console.export_text()


def test_cli_evaluate_prints_the_per_pipe_table() -> None:
    """Synchronous: the CLI runs its own event loop."""
    baseline = asyncio.run(baseline_receipt())  # same data folder: the CLI gets this receipt
    env = {"JUSTKERNEL_DATA_DIR": str(shared_settings().resolved_data_dir), "COLUMNS": "120"}
    args = ["evaluate", str(toolchain().definition.project_dir), "--toolchain", "ascendc-cpu"]
    done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 0, done.output
    out = done.output
    assert "measured" in out and "yes (stored receipt" in out
    assert "cycle model (ascendc-cpu, ascend910b)" in out
    for label in ("cycles", "bound pipe", "cores", *PIPES, "check", "sum"):
        assert f"│ {label} " in out, label
    for c in baseline.cycles:
        assert c.case_id in out and f"{c.est_cycles:,}" in out
    assert f"{baseline.total_est_cycles:,}" in out
    bad = CliRunner().invoke(app, ["evaluate", ".", "--toolchain", "nope"], env=env)
    assert bad.exit_code == 2 and "unknown 'nope'" in bad.output
