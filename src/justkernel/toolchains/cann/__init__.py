"""The CANN toolchain: an msopgen operator project built with CANN, checked on the NPU (or the
simulator) through the aclnn example, and profiled with `msprof op`.

    probe (toolkit, set_env.sh, msprof, cmake, simulator) ── missing? ─► toolchain_unavailable
    project check (layout, template) ─► bash build.sh ─► custom_opp_*.run --install-path=<vendor>
      ─► aclnn example ─► functional cases (example, outputs vs golden)
      ─► [full] perf cases under `msprof op simulator` (cycles, trace) or `msprof op` (device)

Where CANN is absent the receipt says `toolchain_unavailable` and names every missing piece:
no number is ever produced without the real tools. Infrastructure failures (an msprof result
that cannot be parsed, a spec for another toolchain) raise ToolchainError, as on the CPU target.
Commands: `cann.commands`; parsers: `cann.parse`, `cann.trace`, `cann.opprof`; project rules:
`cann.project`; the stages: `cann.run`. Docs: docs/simulation-and-judging.md, "The CANN toolchain".
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
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
from justkernel.operators.definition import PathPolicy
from justkernel.toolchains.cann.env import CannProbe, Mode, probe_cann
from justkernel.toolchains.cann.parse import prof_sum
from justkernel.toolchains.cann.project import (
    DEFAULT_POLICY,
    CannProject,
    file_digests,
    inspect_project,
)
from justkernel.toolchains.cann.run import CannLimits, CaseRunner, Stage, build_and_install
from justkernel.toolchains.common import STOP_AFTER, Draft, LogSink, not_run, worst
from justkernel.toolchains.protocol import Progress, ToolchainError, check_spec, fingerprint

PIPELINE_VERSION = "cann-pipeline/1"


def _template_facts(root: Path | None) -> list[tuple[str, str]] | None:
    """The template's file hashes: another template, another toolchain version."""
    return None if root is None else sorted(file_digests(root).items())


class CannToolchain:
    """See the module docstring. `template`: the imported official template folder (enforces
    the read-only files); `example`: a prebuilt aclnn example (else built from the project's
    examples/); `environ`: the environment to probe (default os.environ)."""

    id = "cann"

    def __init__(
        self,
        soc_version: str = "Ascend910B4",
        ascend_home: Path | None = None,
        *,
        mode: Mode = "simulator",
        definition: OperatorDefinition | None = None,
        template: Path | None = None,
        example: Path | None = None,
        kernel_name: str | None = None,
        limits: CannLimits | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if mode not in ("simulator", "device"):
            raise ValueError(f"mode must be 'simulator' or 'device', not {mode!r}")
        self.soc_version = soc_version
        self.ascend_home = None if ascend_home is None else Path(ascend_home)
        self.mode: Mode = mode
        operator = definition or load_operator()
        # the msopgen project's view (as ascendc-cpu's): the evaluator's tree check and snapshot
        # then see the files this toolchain builds, whichever view the caller passed
        self.definition = operator.ascendc_target() if operator.ascendc is not None else operator
        self.template = None if template is None else Path(template)
        self.example = None if example is None else Path(example)
        self.kernel_name = kernel_name
        self.limits = limits or CannLimits()
        self._environ = dict(os.environ if environ is None else environ)

    @cached_property
    def probe(self) -> CannProbe:
        return probe_cann(
            self.soc_version, mode=self.mode, ascend_home=self.ascend_home, environ=self._environ
        )

    @property
    def policy(self) -> PathPolicy:
        """The operator's `[ascendc]` editable paths (msopgen's defaults without one)."""
        target = self.definition.ascendc
        return DEFAULT_POLICY if target is None else target.paths

    @property
    def example_name(self) -> str:
        return f"test_aclnn_{self.definition.name}"

    def missing(self) -> tuple[str, ...]:
        """Every missing piece of the toolchain itself (empty: it can run here)."""
        found = list(self.probe.missing)
        if self.example is not None and not (
            self.example.is_file() and os.access(self.example, os.X_OK)
        ):
            found.append(f"aclnn example binary {self.example} (not an executable file)")
        return tuple(found)

    @cached_property
    def _facts(self) -> dict[str, Any]:
        return {
            "toolchain": self.id,
            "pipeline": PIPELINE_VERSION,
            "operator": [self.definition.name, self.definition.operator.version],
            "soc_version": self.soc_version,
            "mode": self.mode,
            **self.probe.facts(),
            "template": _template_facts(self.template),
            "example": str(self.example) if self.example else None,
            "kernel_name": self.kernel_name,
            "limits": asdict(self.limits),
        }

    @cached_property
    def version(self) -> str:
        """`cann<version>-<fingerprint>`: the CANN version readable, the rest hashed."""
        label = f"cann{self.probe.version}" if self.probe.version else "cann-absent"
        return f"{label}-{fingerprint(self._facts)}"

    def version_info(self) -> dict[str, Any]:
        return {**self._facts, "version": self.version}

    def executor(self, slot: int | None) -> Executor:
        return Executor(
            host=socket.gethostname(),
            slot=slot,
            toolchain_id=self.id,
            toolchain_version=self.version,
            sandbox=None,  # runs natively on a dedicated CANN host, see the docs
        )

    def inspect(self, source_dir: Path) -> CannProject:
        """The project check this toolchain applies (its tree hash goes into the JobSpec)."""
        return inspect_project(
            source_dir,
            template=self.template,
            soc_version=self.soc_version,
            policy=self.policy,
            need_example=self.example is None,
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
        await asyncio.to_thread(getattr, self, "version")  # the probe sources set_env.sh once
        check_spec(spec, packs, (self.id, self.version), self.definition.name)
        os.makedirs(workdir, exist_ok=True)
        notify: Callable[[str], None] = progress or (lambda _stage: None)
        job = Draft(spec, self.executor(slot), LogSink(workdir / "logs"))

        notify("static_check")
        t = time.monotonic()
        project = await asyncio.to_thread(self.inspect, source_dir)
        job.durations.static_check = time.monotonic() - t
        missing = self.missing()
        if missing:
            wanted = [f"{m} (project)" for m in project.missing]
            return self._unavailable(job, [*missing, *wanted])
        if not project.ok:  # never cached: the key only covers the editable files
            problems = [f"missing {m}" for m in project.missing] + list(project.problems)
            report = CompileReport(ok=False, failed_step="tree", problems=problems)
            return job.finish(Status.STATIC_CHECK_FAILED, problems[0], False, report)
        if project.tree_hash != spec.source_tree_hash:
            raise ToolchainError("the source tree is not the one the spec names")

        notify("compile")
        t = time.monotonic()
        stage = Stage(self.probe, workdir, job.sink, self.limits)
        built = await build_and_install(stage, project, source_dir, self.example, self.example_name)
        job.durations.compile = time.monotonic() - t
        job.logs += built.logs
        if built.example is None:
            return job.finish(Status.COMPILE_FAILED, built.detail, built.cacheable, built.report)

        notify("functional")
        t = time.monotonic()
        runner = CaseRunner(stage, self.definition, built.example, built.env)
        cases, cacheable = await self._functional(spec, runner, packs[LOCAL_PACK], notify)
        job.durations.functional = time.monotonic() - t
        job.cases = cases
        failed = worst(cases)
        if failed is not None:
            return job.finish(failed[0], failed[1], cacheable, built.report)
        if spec.kind is JobKind.PROBE:
            detail = f"{len(cases)} cases passed"
            return job.finish(Status.PROBE_PASSED, detail, cacheable, built.report)

        notify("simulate")
        t = time.monotonic()
        cycles, durations, profiled_cacheable = await self._profile(
            spec, runner, packs[PERF_PACK], notify
        )
        job.durations.simulate = time.monotonic() - t
        job.cycles = cycles
        cacheable = cacheable and profiled_cacheable
        failed = worst([c.check for c in cycles])
        if failed is not None:
            return job.finish(failed[0], f"under msprof: {failed[1]}", cacheable, built.report)
        if self.mode == "simulator":
            measured = [c.est_cycles for c in cycles]
            if all(c is not None for c in measured):
                job.total_est_cycles = sum(c for c in measured if c is not None)
        detail = self._measured(len(cases), len(cycles), job.total_est_cycles, durations)
        return job.finish(Status.MEASURED, detail, cacheable, built.report)

    def _unavailable(self, job: Draft, missing: list[str]) -> Receipt:
        detail = "CANN toolchain unavailable, missing: " + "; ".join(missing)
        report = CompileReport(ok=False, failed_step="toolchain", problems=missing)
        return job.finish(Status.TOOLCHAIN_UNAVAILABLE, detail, False, report)

    def _measured(
        self, cases: int, perf: int, cycles: int | None, durations: dict[str, float | None]
    ) -> str:
        """The detail line of a measured job: what was measured, missing figures as —."""
        total = prof_sum(durations)
        shown = "—" if total is None else f"{total:.3f} us"
        if self.mode == "device":
            return f"{cases} cases passed; prof_sum {shown} (Task Duration, device)"
        counted = "—" if cycles is None else f"{cycles:,}"
        return (
            f"{cases} cases passed; {counted} simulated cycles over {perf} perf cases "
            f"(max over cores); simulated duration sum {shown}"
        )

    async def _functional(
        self, spec: JobSpec, runner: CaseRunner, pack: InputPack, notify: Callable[[str], None]
    ) -> tuple[list[CaseResult], bool]:
        results: list[CaseResult] = []
        cacheable, stopped = True, False
        for case_id in spec.case_ids:
            if stopped:  # after a limit, the rest of the stage is not run
                results.append(not_run(case_id))
                continue
            notify(f"case {case_id}")
            result, ok = await runner.functional(pack, case_id)
            results.append(result)
            cacheable = cacheable and ok
            stopped = result.outcome in STOP_AFTER
        return results, cacheable

    async def _profile(
        self, spec: JobSpec, runner: CaseRunner, pack: InputPack, notify: Callable[[str], None]
    ) -> tuple[list[CycleResult], dict[str, float | None], bool]:
        """Perf cases one after another: the simulator is heavy and a device is exclusive."""
        results: list[CycleResult] = []
        durations: dict[str, float | None] = {}
        cacheable, stopped = True, False
        for case_id in spec.perf_case_ids:
            if stopped:
                skipped = not_run(case_id)
                results.append(
                    CycleResult(case_id=case_id, est_cycles=None, counters=None, check=skipped)
                )
                continue
            notify(f"simulate {case_id}")
            result, figures, ok = await runner.profile(
                pack, case_id, self.mode, self.soc_version, self.kernel_name
            )
            results.append(result)
            value = figures.get("duration_us") if figures else None
            durations[case_id] = float(value) if isinstance(value, int | float) else None
            cacheable = cacheable and ok
            stopped = result.check.outcome in STOP_AFTER
        return results, durations, cacheable
