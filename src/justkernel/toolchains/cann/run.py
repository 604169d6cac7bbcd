"""The stages of one CANN job after the checks: build and install the package, build the aclnn
example, run the functional cases, profile the perf cases. Each stage returns what the receipt
needs; `cann.CannToolchain` orders them and decides the status.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    CompileReport,
    CycleResult,
    LogRef,
    OutputResult,
)
from justkernel.operators import InputPack, OperatorDefinition, check_case_outputs
from justkernel.toolchains.cann.commands import (
    BUILD_OUT,
    RUN_PACKAGE_GLOB,
    build_argv,
    example_argv,
    example_build_argv,
    example_configure_argv,
    install_argv,
    msprof_device_argv,
    msprof_simulator_argv,
    patch_presets,
    runtime_env,
    simulator_env,
    vendor_dir,
)
from justkernel.toolchains.cann.env import CannProbe, Mode
from justkernel.toolchains.cann.exec import CommandResult, run_command
from justkernel.toolchains.cann.opprof import parse_device, parse_simulator
from justkernel.toolchains.cann.project import EXAMPLE_SOURCE, CannProject, copy_project
from justkernel.toolchains.cann.tables import CannParseError
from justkernel.toolchains.common import LogSink
from justkernel.toolchains.protocol import ToolchainError


@dataclass(frozen=True)
class CannLimits:
    """Wall-clock seconds per step (no CPU limit: the work happens on the NPU or simulator)."""

    build: float = 1800
    install: float = 300
    example_build: float = 600
    case: float = 300
    profile: float = 3600


@dataclass
class Built:
    """The outcome of the build stage: an example to run, or why there is none."""

    report: CompileReport
    example: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # to run the example with
    detail: str = ""
    cacheable: bool = True
    logs: list[LogRef] = field(default_factory=list)


@dataclass(frozen=True)
class Stage:
    """What every step of one job shares."""

    probe: CannProbe
    workdir: Path
    sink: LogSink
    limits: CannLimits

    @property
    def env(self) -> dict[str, str]:
        return dict(self.probe.env or {})

    @property
    def home(self) -> Path:
        if self.probe.ascend_home is None:  # the job checks the probe before any stage
            raise ToolchainError("no CANN toolkit")
        return self.probe.ascend_home

    async def run(
        self, argv: list[str], cwd: Path, name: str, seconds: float, env: dict[str, str]
    ) -> CommandResult:
        return await run_command(
            argv,
            cwd=cwd,
            env=env,
            wall_seconds=seconds,
            output_dir=self.workdir / "raw",
            name=name,
        )


def _failed(step: str, what: str, r: CommandResult | None, logs: list[LogRef]) -> Built:
    head = r.tail() if r is not None else []
    detail = f"{what}: {r.outcome()}" if r is not None else what
    cacheable = r is None or not r.timed_out  # a wall-clock timeout may be load
    report = CompileReport(ok=False, failed_step=step, diagnostics_head=head)
    return Built(report, detail=detail, cacheable=cacheable, logs=logs)


async def build_and_install(
    stage: Stage, project: CannProject, source_dir: Path, example: Path | None, example_name: str
) -> Built:
    """bash build.sh in a private copy, install the .run into a scratch vendor folder, build
    the aclnn example against it (unless a prebuilt example was given)."""
    bash, home = stage.probe.bash or "bash", stage.home
    copy = stage.workdir / "project"
    await asyncio.to_thread(copy_project, source_dir, copy)
    presets = copy / "CMakePresets.json"
    data = json.loads(presets.read_text(encoding="utf-8-sig"))
    presets.write_text(json.dumps(patch_presets(data, home), indent=4) + "\n")
    logs: list[LogRef] = []

    r = await stage.run(build_argv(bash), copy, "build", stage.limits.build, stage.env)
    logs.append(stage.sink.put("build.log", r.log()))
    if not r.ok:
        return _failed("build", "build.sh", r, logs)
    packages = sorted((copy / BUILD_OUT).glob(RUN_PACKAGE_GLOB))
    if len(packages) != 1:
        found = ", ".join(p.name for p in packages) or "none"
        return _failed(
            "build", f"build.sh made {found}, expected one {RUN_PACKAGE_GLOB}", None, logs
        )

    vendor_root = stage.workdir / "vendor"
    vendor_root.mkdir(parents=True, exist_ok=True)
    r = await stage.run(
        install_argv(bash, packages[0], vendor_root),
        copy,
        "install",
        stage.limits.install,
        stage.env,
    )
    logs.append(stage.sink.put("install.log", r.log()))
    vendor = vendor_dir(vendor_root, project.vendor_name)
    if not r.ok:
        return _failed("install", packages[0].name, r, logs)
    if not vendor.is_dir():
        return _failed("install", f"{packages[0].name} did not install into {vendor}", None, logs)
    env = runtime_env(stage.env, vendor_root, project.vendor_name)

    if example is None:
        cmake = stage.probe.cmake or "cmake"
        build = stage.workdir / "example-build"
        source = copy / Path(EXAMPLE_SOURCE).parent
        for name, argv in (
            ("example-configure", example_configure_argv(cmake, source, build, home, vendor)),
            ("example-build", example_build_argv(cmake, build)),
        ):
            r = await stage.run(argv, copy, name, stage.limits.example_build, env)
            logs.append(stage.sink.put(f"{name}.log", r.log()))
            if not r.ok:
                return _failed("example", f"aclnn example ({name})", r, logs)
        example = build / example_name
        if not example.is_file():
            return _failed("example", f"the example build made no {example_name}", None, logs)
    return Built(CompileReport(ok=True), example=example, env=env, logs=logs)


@dataclass(frozen=True)
class CaseRunner:
    """Runs the aclnn example on the cases of one pack and judges the dumped outputs."""

    stage: Stage
    definition: OperatorDefinition
    example: Path
    env: dict[str, str]

    def judge(
        self, r: CommandResult, pack: InputPack, case_id: str, out: Path
    ) -> tuple[CaseResult, bool]:
        """(result, cacheable): how the run ended, then the golden check of its outputs."""
        result = CaseResult(
            case_id=case_id,
            outcome=CaseOutcome.PASSED,
            passed=False,
            wall_seconds=round(r.seconds, 4),
        )
        if r.timed_out:
            result.outcome, result.detail = CaseOutcome.TIMEOUT, f"wall clock limit ({r.outcome()})"
            return result, False
        if r.returncode != 0:
            last = r.tail(1)
            result.outcome = CaseOutcome.CRASHED
            result.detail = r.outcome() + (f": {last[0][:300]}" if last else "")
            return result, True
        check = check_case_outputs(pack, case_id, out, self.definition)
        result.outputs = [OutputResult(**o.to_dict()) for o in check.outputs]
        result.passed = check.passed
        if not check.passed:
            result.outcome, result.detail = CaseOutcome.INCORRECT, check.message
        return result, True

    def _logs(self, case_id: str, r: CommandResult) -> list[LogRef]:
        sink = self.stage.sink
        return [
            sink.put(f"{case_id}.{name}", text)
            for name, text in (("stdout", r.stdout), ("stderr", r.stderr))
            if text
        ]

    async def functional(self, pack: InputPack, case_id: str) -> tuple[CaseResult, bool]:
        out = self.stage.workdir / "cases" / case_id
        out.mkdir(parents=True, exist_ok=True)
        argv = example_argv(self.example, pack.case_dir(case_id), out)
        r = await self.stage.run(argv, out, f"case-{case_id}", self.stage.limits.case, self.env)
        result, cacheable = await asyncio.to_thread(self.judge, r, pack, case_id, out)
        if not result.passed:
            result.logs = self._logs(case_id, r)
        return result, cacheable

    async def profile(
        self, pack: InputPack, case_id: str, mode: Mode, soc: str, kernel_name: str | None
    ) -> tuple[CycleResult, dict[str, object] | None, bool]:
        """The example under msprof (simulator or device): the outputs are judged too, so a
        kernel cannot behave differently when profiled; then the figures are parsed."""
        root = self.stage.workdir / "profile" / case_id
        out, prof = root / "out", root / "msprof"
        out.mkdir(parents=True, exist_ok=True)
        prof.mkdir(parents=True, exist_ok=True)
        program = example_argv(self.example, pack.case_dir(case_id), out)
        msprof = self.stage.probe.msprof or "msprof"
        if mode == "simulator":
            argv = msprof_simulator_argv(msprof, soc, prof, program, kernel_name=kernel_name)
            env = simulator_env(self.env, self.stage.home, soc)
        else:
            argv = msprof_device_argv(msprof, prof, program, kernel_name=kernel_name)
            env = self.env
        r = await self.stage.run(argv, root, f"profile-{case_id}", self.stage.limits.profile, env)
        check, cacheable = await asyncio.to_thread(self.judge, r, pack, case_id, out)
        logs = self._logs(f"{case_id}.msprof", r)
        figures = None
        if check.passed:
            figures = await asyncio.to_thread(_figures, prof, mode, case_id)
            logs.append(
                self.stage.sink.put(f"{case_id}.msprof.json", json.dumps(figures, indent=1))
            )
        cycles = figures.get("total_cycles") if figures else None
        result = CycleResult(
            case_id=case_id,
            est_cycles=cycles if isinstance(cycles, int) else None,
            counters=None,
            check=check,
            wall_seconds=round(r.seconds, 3),
            logs=logs,
        )
        return result, figures, cacheable and mode == "simulator"


def _figures(prof: Path, mode: Mode, case_id: str) -> dict[str, object]:
    """The parsed profile; a run that passed but left no usable profile is the lab's problem
    (msprof or a format change), never the candidate's: it raises ToolchainError."""
    try:
        if mode == "simulator":
            report = parse_simulator(prof)
            figures = report.to_dict()
            if report.total_cycles is None:  # a missing trace only leaves the duration out
                raise CannParseError(f"{report.root}: no cycle count for every core")
        else:
            device = parse_device(prof)
            figures = {**device.to_dict(), "duration_us": device.duration_us()}
    except CannParseError as exc:
        raise ToolchainError(f"{case_id}: unusable msprof output: {exc}") from None
    return {"mode": mode, **figures}
