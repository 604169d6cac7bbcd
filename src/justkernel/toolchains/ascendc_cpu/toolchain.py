"""`AscendcCpuToolchain` (id "ascendc-cpu"): the stages of one job, ending in a receipt.

    tree check ─► source scan ─► compile (sandboxed g++, host + kernel per dtype at once)
      ─► object checks ─► link ─► functional cases ─► [full] perf cases under the cycle model

The first failing stage decides the status (`core.receipts.Status`, plus `api_misuse`
here); infrastructure failures raise, so they are never charged to the candidate or cached.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from justkernel.core.jobs import LOCAL_PACK, PERF_PACK, JobSpec
from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    CompileReport,
    CycleResult,
    Executor,
    JobKind,
    Misuse,
    Receipt,
    Status,
)
from justkernel.operators import InputPack, OperatorDefinition, load_operator
from justkernel.toolchains.ascendc_cpu import library
from justkernel.toolchains.ascendc_cpu.build import (
    BuildOutcome,
    HarnessMain,
    build_candidate,
    compile_steps,
)
from justkernel.toolchains.ascendc_cpu.objcache import ObjectCache
from justkernel.toolchains.ascendc_cpu.pch import PrecompiledHeaders
from justkernel.toolchains.ascendc_cpu.run import CaseRunner
from justkernel.toolchains.common import STOP_AFTER, Draft, LogSink, not_run, worst
from justkernel.toolchains.cpu.run import Verdict
from justkernel.toolchains.host_facts import cpu_model, tool_version
from justkernel.toolchains.protocol import Progress, ToolchainError, check_spec, fingerprint
from justkernel.toolchains.sandbox import SandboxLimits
from justkernel.toolchains.sandbox.checked import sandbox_kind
from justkernel.toolchains.sandbox.paths import open_dir
from justkernel.toolchains.tree import check_tree, template_files

PIPELINE_VERSION = "ascendc-cpu-pipeline/1"


@dataclass(frozen=True)
class AscendcLimits:
    """Sandbox limits per stage. g++ on the Ascend C headers needs more memory and time than
    gcc on C. A case may hold up to one thread per block: the harness runs each AI Core's block
    on a thread of its own, one at a time (jk::run_blocks; a block waiting at SyncAll keeps its
    thread), so RLIMIT_NPROC leaves room for 40 vector cores, the main thread and bwrap's two.
    Team code cannot start threads of its own (pthread_create and std::thread are not on the
    object check's allow-list), and the model counts no CPU time, so threads change nothing."""

    compile: SandboxLimits = field(
        default_factory=lambda: SandboxLimits(wall_seconds=90, cpu_seconds=60, processes=32)
    )
    case: SandboxLimits = field(
        default_factory=lambda: SandboxLimits(wall_seconds=30, cpu_seconds=15, processes=64)
    )
    perf: SandboxLimits = field(
        default_factory=lambda: SandboxLimits(wall_seconds=60, cpu_seconds=30, processes=64)
    )


class AscendcCpuToolchain:
    """See the module docstring and docs/simulation-and-judging.md. Safe to share between
    concurrent jobs. `definition` is the operator's (its `[ascendc]` section is used)."""

    id = "ascendc-cpu"

    def __init__(
        self,
        definition: OperatorDefinition | None = None,
        *,
        limits: AscendcLimits | None = None,
        cache_dir: Path | None = None,
        scan_syscalls: bool = True,
    ) -> None:
        operator = definition or load_operator()
        self.operator = operator
        self.definition = operator.ascendc_target()  # the tree check's and evaluator's view
        assert operator.ascendc is not None
        self.target = operator.ascendc
        self.limits = limits or AscendcLimits()
        self.scan_syscalls = scan_syscalls
        folder = None if cache_dir is None else Path(cache_dir) / self.version
        self._main = HarnessMain(folder)
        self._pch = PrecompiledHeaders(folder, self.limits.compile)
        self._objects = None if folder is None else ObjectCache(folder / "objects", self.version)

    @cached_property
    def _facts(self) -> dict[str, Any]:
        return {
            "toolchain": self.id,
            "pipeline": PIPELINE_VERSION,
            "operator": [self.definition.name, self.definition.operator.version],
            "target": self.target.model_dump(mode="json", exclude={"spec"}),  # not built
            "template": sorted(template_files(self.definition).items()),
            "gcc": tool_version([library.CXX, "--version"]),
            "libc": os.confstr("CS_GNU_LIBC_VERSION"),
            "cxxflags": list(library.CXXFLAGS),
            "main_cxxflags": list(library.MAIN_CXXFLAGS),
            "pch": library.PCH_INCLUDES,
            "library": library.header_digests(),
            "harness": library.harness_digest(),
            "soc": library.soc_facts(),
            "cycle_model": library.CYCLE_MODEL,
            "scan_syscalls": self.scan_syscalls,
            "limits": {k: asdict(v) for k, v in vars(self.limits).items()},
        }

    @cached_property
    def version(self) -> str:
        return fingerprint(self._facts)

    def version_info(self) -> dict[str, Any]:
        return {**self._facts, "version": self.version, "sandbox": sandbox_kind()}

    def missing(self) -> tuple[str, ...]:
        """What this host lacks to run the toolchain (empty: it can run here)."""
        found = []
        if shutil.which(library.CXX) is None:
            found.append(f"{library.CXX} (the C++ compiler)")
        if not (library.include_dir() / "kernel_operator.h").is_file():
            found.append(f"the Ascend C library headers ({library.include_dir()})")
        if not library.harness_source().is_file():
            found.append(f"the harness source ({library.harness_source()})")
        soc = self._facts["soc"]
        if soc.get("fingerprint") is None:
            found.append(f"the SoC parameters ({soc.get('error', 'unknown problem')})")
        return tuple(found)

    def executor(self, slot: int | None) -> Executor:
        return Executor(
            host=socket.gethostname(),
            slot=slot,
            toolchain_id=self.id,
            toolchain_version=self.version,
            gcc=self._facts["gcc"],
            valgrind=None,
            sandbox=sandbox_kind(),
            cpu_model=cpu_model(),
        )

    async def warm(self) -> float:
        """Build what every job shares now, not in the first job: the harness main (~11 CPU-s
        at -O2) and the precompiled headers of every unit (~1 CPU-s each). Seconds taken."""
        t = time.monotonic()
        units = compile_steps(self.target, library.DTYPES)
        await asyncio.gather(
            self._main.path(), *(self._pch.folder(u.name, u.pch_argv) for u in units)
        )
        return time.monotonic() - t

    def dtypes_for(self, spec: JobSpec, packs: Mapping[str, InputPack]) -> tuple[str, ...]:
        """The dtypes whose kernel this job needs: a float32-only probe skips the half build."""
        wanted = {packs[LOCAL_PACK].entry(c).case.dtype for c in spec.case_ids}
        if spec.perf_case_ids:
            wanted |= {packs[PERF_PACK].entry(c).case.dtype for c in spec.perf_case_ids}
        return tuple(d for d in library.DTYPES if d in wanted)

    async def run(
        self,
        spec: JobSpec,
        source_dir: Path,
        packs: Mapping[str, InputPack],
        workdir: Path,
        slot: int,
        *,
        parallelism: int = 1,
        progress: Progress | None = None,
    ) -> Receipt:
        check_spec(spec, packs, (self.id, self.version), self.definition.name)
        for folder in (workdir, workdir / "cases", workdir / "perf", workdir / "build"):
            open_dir(folder)
        notify: Callable[[str], None] = progress or (lambda _stage: None)
        job = Draft(spec, self.executor(slot), LogSink(workdir / "logs"))
        missing = self.missing()
        if missing:
            detail = "ascendc-cpu toolchain unavailable, missing: " + "; ".join(missing)
            report = CompileReport(ok=False, failed_step="toolchain", problems=list(missing))
            return job.finish(Status.TOOLCHAIN_UNAVAILABLE, detail, False, report)

        notify("static_check")
        t = time.monotonic()
        tree = await asyncio.to_thread(check_tree, source_dir, self.definition)
        job.durations.static_check = time.monotonic() - t
        if tree.problems:  # never cached: the key only covers the editable files
            report = CompileReport(ok=False, failed_step="tree", problems=list(tree.problems))
            return job.finish(Status.STATIC_CHECK_FAILED, tree.problems[0], False, report)
        if tree.tree_hash != spec.source_tree_hash:
            raise ToolchainError("the source tree is not the one the spec names")

        notify("compile")
        main_obj = await self._main.path()
        out = await build_candidate(
            source_dir,
            workdir / "build",
            self.target,
            tree.editable,
            main_obj,
            self.dtypes_for(spec, packs),
            self.limits.compile,
            scan_syscalls=self.scan_syscalls,
            cache=self._objects,
            pch=self._pch,
        )
        job.durations.compile = out.compile_seconds
        job.durations.static_check += out.static_seconds
        report = _report(out)
        if out.log:
            job.logs.append(job.sink.put("compile.log", out.log))
        if not out.ok:
            return job.finish(
                out.status or Status.COMPILE_FAILED, out.detail, out.cacheable, report
            )

        notify("functional")
        t = time.monotonic()
        runner = CaseRunner(
            out.harnesses,
            packs[LOCAL_PACK],
            workdir / "cases",
            self.limits.case,
            self.operator,
            job.sink,
        )
        cases, verdicts = await self._functional(spec, runner, notify, parallelism)
        job.durations.functional = time.monotonic() - t
        job.cases = cases
        cacheable = all(v.cacheable for v in verdicts)
        failed = worst(cases)
        if failed is not None:
            return self._finish(job, failed, cacheable, report, cases)
        if spec.kind is JobKind.PROBE:
            return job.finish(Status.PROBE_PASSED, f"{len(cases)} cases passed", cacheable, report)

        notify("simulate")
        t = time.monotonic()
        perf = CaseRunner(
            out.harnesses,
            packs[PERF_PACK],
            workdir / "perf",
            self.limits.perf,
            self.operator,
            job.sink,
        )
        cycles, verdicts = await self._perf(spec, perf, notify, parallelism)
        job.durations.simulate = time.monotonic() - t
        job.cycles = cycles
        cacheable = cacheable and all(v.cacheable for v in verdicts)
        checks = [c.check for c in cycles]
        failed = worst(checks)
        if failed is not None:
            failed = (failed[0], f"under the cycle model: {failed[1]}")
            return self._finish(job, failed, cacheable, report, checks)
        total = sum(c.est_cycles for c in cycles if c.est_cycles is not None)
        job.total_est_cycles = total
        bound = ", ".join(
            f"{c.case_id} {c.pipeline.bound_pipe}"
            for c in cycles
            if c.pipeline and c.pipeline.bound_pipe
        )
        detail = (
            f"{len(cases)} cases passed; {total:,} modelled cycles over {len(cycles)} perf "
            f"cases ({self._facts['soc']['name']}; bound: {bound or '—'})"
        )
        return job.finish(Status.MEASURED, detail, cacheable, report)

    @staticmethod
    def _finish(
        job: Draft,
        failed: tuple[Status, str],
        cacheable: bool,
        report: CompileReport,
        checks: list[CaseResult],
    ) -> Receipt:
        receipt = job.finish(failed[0], failed[1], cacheable, report)
        if failed[0] is Status.API_MISUSE:
            receipt.misuse = _first_misuse(checks)
        return receipt

    async def _functional(
        self,
        spec: JobSpec,
        runner: CaseRunner,
        notify: Callable[[str], None],
        parallelism: int,
    ) -> tuple[list[CaseResult], list[Verdict]]:
        done = await runner.batch(spec.case_ids, False, parallelism)

        async def one(case_id: str) -> tuple[CaseResult, Verdict]:
            notify(f"case {case_id}")
            return await runner.functional(case_id, done.get(case_id))

        return await _gated(spec.case_ids, one, not_run, lambda r: r.outcome, parallelism)

    async def _perf(
        self,
        spec: JobSpec,
        runner: CaseRunner,
        notify: Callable[[str], None],
        parallelism: int,
    ) -> tuple[list[CycleResult], list[Verdict]]:
        done = await runner.batch(spec.perf_case_ids, True, parallelism)

        async def one(case_id: str) -> tuple[CycleResult, Verdict]:
            notify(f"simulate {case_id}")
            return await runner.perf(case_id, done.get(case_id))

        def skipped(case_id: str) -> CycleResult:
            return CycleResult(
                case_id=case_id, est_cycles=None, counters=None, check=not_run(case_id)
            )

        return await _gated(
            spec.perf_case_ids, one, skipped, lambda r: r.check.outcome, parallelism
        )


R = TypeVar("R")


async def _gated(
    case_ids: tuple[str, ...],
    one: Callable[[str], Awaitable[tuple[R, Verdict]]],
    skipped: Callable[[str], R],
    outcome: Callable[[R], CaseOutcome],
    parallelism: int,
) -> tuple[list[R], list[Verdict]]:
    """Cases `parallelism` at a time, results in case order; after a case that hit a limit
    (STOP_AFTER), the ones not started yet are not run. With batches (`CaseRunner.batch`) a
    case judged from its batch only has its files checked here; one that hit a limit there is
    run again alone, so the gate sees the same outcomes, in the same order, as without."""
    gate = asyncio.Semaphore(max(1, parallelism))
    stop = False

    async def gated(case_id: str) -> tuple[R, Verdict | None]:
        nonlocal stop
        async with gate:
            if stop:
                return skipped(case_id), None
            result, verdict = await one(case_id)
            stop = stop or outcome(result) in STOP_AFTER
            return result, verdict

    done = await asyncio.gather(*(gated(c) for c in case_ids))
    return [r for r, _ in done], [v for _, v in done if v is not None]


def _report(out: BuildOutcome) -> CompileReport:
    return CompileReport(
        ok=out.ok,
        failed_step=out.failed_step,
        diagnostics_head=out.diagnostics_head(),
        problems=list(out.problems),
    )


def _first_misuse(checks: list[CaseResult]) -> Misuse | None:
    for c in checks:
        if c.outcome is CaseOutcome.API_MISUSE and c.misuse is not None:
            return c.misuse
    return None
