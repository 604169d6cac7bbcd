"""The CPU toolchain: one candidate through static checks, sandboxed compile, functional check
and cycle simulation, ending in a receipt.

    tree check ─► compile (sandboxed gcc) ─► object checks ─► link ─► functional cases
               (sandboxed harness, golden check) ─► [full] callgrind on the perf cases

The first failing stage decides the status; see `core.receipts.Status`. Infrastructure
failures (no sandbox, a broken pack) raise instead of producing a receipt, so they are never
charged to the candidate or cached.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from justkernel.core.jobs import LOCAL_PACK, PERF_PACK, JobSpec
from justkernel.core.receipts import (
    CaseResult,
    CompileReport,
    CycleResult,
    Executor,
    JobKind,
    Receipt,
    Status,
)
from justkernel.operators import InputPack, OperatorDefinition, load_operator
from justkernel.toolchains.common import STOP_AFTER, Draft, LogSink, not_run, worst
from justkernel.toolchains.cpu.compile import HarnessObject, compile_candidate
from justkernel.toolchains.cpu.run import CaseRunner, Verdict
from justkernel.toolchains.cpu.simulate import CYCLE_MODEL
from justkernel.toolchains.host_facts import cpu_model, tool_version
from justkernel.toolchains.protocol import Progress, ToolchainError, check_spec, fingerprint
from justkernel.toolchains.sandbox import SandboxLimits
from justkernel.toolchains.sandbox.checked import sandbox_kind
from justkernel.toolchains.sandbox.paths import open_dir
from justkernel.toolchains.tree import check_tree, template_files

PIPELINE_VERSION = "cpu-pipeline/2"  # 2: byte scan, pre-main and W^X checks


@dataclass(frozen=True)
class CpuLimits:
    """Sandbox limits per stage. The CPU limit sits below the wall limit so a busy loop ends
    on CPU time (deterministic, cacheable) rather than on a wall clock that load can move.
    One process only for harness runs (3 = bwrap's two + the harness): a kernel cannot start
    threads that would escape callgrind's kernel-only counting."""

    compile: SandboxLimits = field(
        default_factory=lambda: SandboxLimits(wall_seconds=60, cpu_seconds=60, processes=32)
    )
    case: SandboxLimits = field(
        default_factory=lambda: SandboxLimits(wall_seconds=20, cpu_seconds=10, processes=3)
    )
    simulate: SandboxLimits = field(
        default_factory=lambda: SandboxLimits.valgrind(cpu_seconds=120, processes=3)
    )


class CpuToolchain:
    """gcc + callgrind in the bubblewrap sandbox; see the module docstring and
    docs/simulation-and-judging.md. Safe to share between concurrent jobs."""

    id = "cpu"

    def __init__(
        self,
        definition: OperatorDefinition | None = None,
        *,
        limits: CpuLimits | None = None,
        cache_dir: Path | None = None,
        scan_syscalls: bool = True,
    ) -> None:
        self.definition = definition or load_operator()
        self.limits = limits or CpuLimits()
        self.scan_syscalls = scan_syscalls
        folder = None if cache_dir is None else Path(cache_dir) / self.version
        self._harness = HarnessObject(self.definition, folder)

    @cached_property
    def _facts(self) -> dict[str, Any]:
        build = self.definition.build
        return {
            "toolchain": self.id,
            "pipeline": PIPELINE_VERSION,
            "operator": [self.definition.name, self.definition.operator.version],
            "template": sorted(template_files(self.definition).items()),
            "gcc": tool_version([build.compiler, "--version"]),
            "valgrind": tool_version(["valgrind", "--version"]),
            "libc": os.confstr("CS_GNU_LIBC_VERSION"),
            "cpu_model": cpu_model(),  # libc picks memset/memcpy variants by CPU
            "cflags": list(build.cflags),
            "ldlibs": list(build.ldlibs),
            "cycle_model": CYCLE_MODEL,
            "scan_syscalls": self.scan_syscalls,
            "limits": {k: asdict(v) for k, v in vars(self.limits).items()},
        }

    @cached_property
    def version(self) -> str:
        return fingerprint(self._facts)

    def version_info(self) -> dict[str, Any]:
        return {**self._facts, "version": self.version, "sandbox": sandbox_kind()}

    def executor(self, slot: int | None) -> Executor:
        return Executor(
            host=socket.gethostname(),
            slot=slot,
            toolchain_id=self.id,
            toolchain_version=self.version,
            gcc=self._facts["gcc"],
            valgrind=self._facts["valgrind"],
            sandbox=sandbox_kind(),
            cpu_model=self._facts["cpu_model"],
        )

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
        for folder in (workdir, workdir / "cases", workdir / "sim", workdir / "build"):
            open_dir(folder)
        notify: Callable[[str], None] = progress or (lambda _stage: None)
        job = Draft(spec, self.executor(slot), LogSink(workdir / "logs"))

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
        build = workdir / "build"
        harness_obj = await self._harness.path()
        out = await compile_candidate(
            source_dir,
            build,
            self.definition,
            harness_obj,
            self.limits.compile,
            scan_syscalls=self.scan_syscalls,
        )
        job.durations.compile = out.compile_seconds
        job.durations.static_check += out.static_seconds
        if out.log:
            job.logs.append(job.sink.put("compile.log", out.log))
        report = CompileReport(
            ok=out.ok,
            failed_step=out.failed_step,
            diagnostics_head=out.diagnostics_head(),
            problems=list(out.problems),
        )
        if not out.ok or out.harness is None:
            status = out.status or Status.COMPILE_FAILED
            return job.finish(status, out.detail, out.cacheable, report)

        notify("functional")
        t = time.monotonic()
        runner = CaseRunner(
            out.harness,
            packs[LOCAL_PACK],
            workdir / "cases",
            self.limits.case,
            self.definition,
            job.sink,
        )
        cases, verdicts = await self._functional(spec, runner, notify)
        job.durations.functional = time.monotonic() - t
        job.cases = cases
        cacheable = all(v.cacheable for v in verdicts)
        failed = worst(cases)
        if failed is not None:
            return job.finish(failed[0], failed[1], cacheable, report)
        if spec.kind is JobKind.PROBE:
            return job.finish(Status.PROBE_PASSED, f"{len(cases)} cases passed", cacheable, report)

        notify("simulate")
        t = time.monotonic()
        runner = dataclasses.replace(
            runner, pack=packs[PERF_PACK], root=workdir / "sim", limits=self.limits.simulate
        )
        cycles, verdicts = await self._simulate(spec, runner, notify, parallelism)
        job.durations.simulate = time.monotonic() - t
        job.cycles = cycles
        cacheable = cacheable and all(v.cacheable for v in verdicts)
        failed = worst([c.check for c in cycles])
        if failed is not None:
            return job.finish(failed[0], f"under the simulator: {failed[1]}", cacheable, report)
        total = sum(c.est_cycles for c in cycles if c.est_cycles is not None)
        job.total_est_cycles = total
        detail = f"{len(cases)} cases passed; {total:,} est. cycles over {len(cycles)} perf cases"
        return job.finish(Status.MEASURED, detail, cacheable, report)

    async def _functional(
        self, spec: JobSpec, runner: CaseRunner, notify: Callable[[str], None]
    ) -> tuple[list[CaseResult], list[Verdict]]:
        results: list[CaseResult] = []
        verdicts: list[Verdict] = []
        for case_id in spec.case_ids:
            if results and results[-1].outcome in STOP_AFTER:
                results.append(not_run(case_id))
                continue
            notify(f"case {case_id}")
            result, verdict = await runner.functional(case_id)
            results.append(result)
            verdicts.append(verdict)
        return results, verdicts

    async def _simulate(
        self, spec: JobSpec, runner: CaseRunner, notify: Callable[[str], None], parallelism: int
    ) -> tuple[list[CycleResult], list[Verdict]]:
        gate = asyncio.Semaphore(max(1, parallelism))
        stop = False

        async def one(case_id: str) -> tuple[CycleResult, Verdict | None]:
            nonlocal stop
            async with gate:
                if stop:
                    skipped = not_run(case_id)
                    return CycleResult(
                        case_id=case_id, est_cycles=None, counters=None, check=skipped
                    ), None
                notify(f"simulate {case_id}")
                result, verdict = await runner.simulate(case_id)
                stop = stop or result.check.outcome in STOP_AFTER
                return result, verdict

        done = await asyncio.gather(*(one(c) for c in spec.perf_case_ids))
        return [r for r, _ in done], [v for _, v in done if v is not None]
