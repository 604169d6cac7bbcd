"""One submission on the hidden points: template + uploaded files ─► lab evaluator ─► points.

The judge uses the lab's own pipeline (a toolchain, its sandbox, receipts and cache) with the
hidden case set in place of the local one, with the toolchain the submission names: the Ascend
C project on `ascendc-cpu` (the default: the contest's own project, timed by the engine's
per-pipe cycle model) or the C port on `cpu` (timed by callgrind). One evaluator per target,
built on first use, each with its toolchain's cache under the judge's work folder. Functional
check of all 15 points, then the cycle model on all 15 (each point's time is measured, none is
estimated from another). A point's `time_us` is the cycle model's est_cycles / 1000, i.e.
microseconds at a nominal 1 GHz; `time_source` names the model in every result. What the judge
did not measure stays None: the toolchain simulates only candidates that passed every
functional point, so a failing candidate has no times, and `prof_sum_us` exists only when every
point passed and was timed. A failure that load can cause (a wall-clock timeout: the receipt is
not cacheable) is evaluated once more before it becomes an official fail.

Nothing from the run's text (stderr, details, case notes, an api_misuse record's message and
site: they can quote extents) reaches a result: a kernel could print the hidden shapes there.
Only compile diagnostics are passed on; the compiler never sees a case.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from justkernel.core.receipts import CaseResult, CycleResult, Receipt, Status
from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.judge.paths import JudgeFolder
from justkernel.operators import CaseSpec, OperatorDefinition
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains.registry import TOOLCHAINS
from justkernel.workers.evaluator import CaseSets, Evaluator
from justkernel.workers.pool import LocalPool

# The cycle model that timed a target's points, as every result labels it.
TIME_SOURCE: dict[str, str] = {
    "ascendc-cpu": (
        "cycle-model: the ascendc-cpu engine's per-pipe cycle model (MTE2/V/MTE3/S pipes, "
        "ascend910b parameters), modelled cycles / 1000 at a nominal 1 GHz (not NPU time)"
    ),
    "cpu": (
        "cycle-model: callgrind est_cycles / 1000 at a nominal 1 GHz on the CPU port (not NPU time)"
    ),
}
JUDGED_TOOLCHAINS: tuple[str, ...] = tuple(TIME_SOURCE)  # what the local judge evaluates
MAX_DIAGNOSTIC_LINES = 30
LOAD_RETRIES = 1  # extra evaluations of a failure that may be due to load


def _error_ratio(case: CaseResult) -> float | None:
    known = [o.error_ratio for o in case.outputs if o.error_ratio is not None]
    return max(known) if known else None


def _point(pid: str, receipt: Receipt, case: CaseResult | None, cyc: CycleResult | None) -> dict:
    point: dict[str, Any] = {"id": pid, "passed": False, "error_ratio": None, "time_us": None}
    if case is None:  # the candidate never reached the cases (compile or static check)
        return {**point, "outcome": receipt.status.value}
    passed = case.passed is True
    outcome = case.outcome.value
    if passed and cyc is not None and cyc.check.passed is False:
        passed, outcome = False, f"{cyc.check.outcome.value} under the simulator"
    if passed and cyc is not None and cyc.est_cycles is not None:
        point["time_us"] = cyc.est_cycles / 1000
    return {**point, "passed": passed, "outcome": outcome, "error_ratio": _error_ratio(case)}


def toolchain_cache_dir(work_dir: Path, toolchain_id: str) -> Path:
    """Where the judge keeps a toolchain's trusted artefacts: under its own work folder, apart
    from the lab's cache (the judge is another service with its own folders)."""
    return work_dir / "lab" / "toolchains" / toolchain_id


def time_source(toolchain_id: str) -> str:
    """What timed the points of a submission for `toolchain_id`."""
    return TIME_SOURCE[toolchain_id]


def result_from_receipt(receipt: Receipt, point_ids: Sequence[str]) -> dict[str, Any]:
    """The judge's answer for one receipt of the hidden points (best times are added by the
    store). Shapes, inputs and run output never appear in it."""
    cases = {c.case_id: c for c in receipt.cases}
    cycles = {c.case_id: c for c in receipt.cycles}
    points = [_point(pid, receipt, cases.get(pid), cycles.get(pid)) for pid in point_ids]
    complete = all(p["passed"] and p["time_us"] is not None for p in points)
    return {
        "verdict": "pass" if all(p["passed"] for p in points) else "fail",
        "outcome": receipt.status.value,
        "points": points,
        "prof_sum_us": sum(p["time_us"] for p in points) if complete else None,
        "toolchain": receipt.executor.toolchain_id,
        "time_source": time_source(receipt.executor.toolchain_id),
        "diagnostics": compile_diagnostics(receipt),
        "evaluation": {
            "toolchain": receipt.executor.toolchain_id,
            "toolchain_version": receipt.executor.toolchain_version,
            "receipt_key": receipt.job_key,
            "source_sha256": receipt.source_sha256,
            "cache_hit": receipt.cache_hit,
            "seconds": receipt.durations.total,
        },
    }


def compile_diagnostics(receipt: Receipt) -> list[str]:
    """What the compile or the static check said, for a receipt that failed there: the
    receipt's detail line first ("kernel_f16: the compiler ran out of time" names a failure
    the compiler printed nothing for, so its head alone was empty), then the problems and
    the compiler's first lines. The compiler never sees a case, so none of it names one."""
    if receipt.status not in (Status.COMPILE_FAILED, Status.STATIC_CHECK_FAILED):
        return []
    lines = [receipt.detail] if receipt.detail else []
    if receipt.compile:
        lines += [*receipt.compile.problems, *receipt.compile.diagnostics_head]
    unique = [line for n, line in enumerate(lines) if line and line not in lines[:n]]
    return unique[:MAX_DIAGNOSTIC_LINES]


class TargetUnavailable(RuntimeError):
    """The judge's host lacks what a toolchain needs (`Toolchain.missing()`); the submission is
    refused before it is queued instead of failing as an infrastructure error."""

    def __init__(self, toolchain_id: str, missing: Sequence[str]) -> None:
        super().__init__(f"{toolchain_id} cannot run on the judge's host: {', '.join(missing)}")
        self.toolchain_id = toolchain_id
        self.missing = tuple(missing)


@dataclass
class TargetEvaluator:
    """One target's evaluator and the operator view its projects are laid out by."""

    toolchain_id: str
    definition: OperatorDefinition  # the toolchain's view (template, editable paths)
    evaluator: Evaluator


@dataclass
class JudgeEvaluation:
    """The judge's evaluator: the lab pipeline on the hidden points, in the judge's work dir,
    one evaluator per target (`JUDGED_TOOLCHAINS`), built when a submission first needs it."""

    definition: OperatorDefinition  # the operator's own (the C port view)
    hidden: tuple[CaseSpec, ...]
    work: Path
    settings: Settings
    sim_parallelism: int = 2
    targets: dict[str, TargetEvaluator] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # submit's thread

    @classmethod
    def create(
        cls,
        folder: JudgeFolder,
        definition: OperatorDefinition,
        hidden: Sequence[CaseSpec],
        *,
        sim_parallelism: int = 2,
    ) -> JudgeEvaluation:
        work = folder.work_dir
        settings = Settings(data_dir=work / "lab", config_dir=folder.root / "config")
        return cls(definition, tuple(hidden), work, settings, sim_parallelism)

    @property
    def scratch(self) -> Path:
        return self.work / "submissions"

    @property
    def point_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.hidden)

    def target(self, toolchain_id: str) -> TargetEvaluator:
        """The evaluator of `toolchain_id`, built on first use. Its toolchain's cache (the
        trusted harness objects, precompiled headers, object cache) is under the work folder,
        apart from the lab's; the receipt cache and input packs are shared by every target
        (receipt keys name the toolchain; packs are the operator's)."""
        if toolchain_id not in JUDGED_TOOLCHAINS:
            raise ValueError(f"the local judge does not evaluate toolchain {toolchain_id!r}")
        with self._lock:
            return self._target(toolchain_id)

    def _target(self, toolchain_id: str) -> TargetEvaluator:
        if toolchain_id not in self.targets:
            cache = toolchain_cache_dir(self.work, toolchain_id)
            toolchain = TOOLCHAINS[toolchain_id](self.definition, cache)
            missing = toolchain.missing() if hasattr(toolchain, "missing") else ()
            if missing:
                raise TargetUnavailable(toolchain_id, missing)
            evaluator = Evaluator(
                self.settings,
                LocalPool(slots=1),
                toolchain,
                BlobStore(self.settings.blobs_dir),
                sim_parallelism=self.sim_parallelism,
                cases=CaseSets(local=self.hidden, perf=self.hidden),
            )
            view = self.definition.for_toolchain(toolchain_id)
            self.targets[toolchain_id] = TargetEvaluator(toolchain_id, view, evaluator)
        return self.targets[toolchain_id]

    def unavailable(self, toolchain_id: str) -> tuple[str, ...]:
        """What the judge's host lacks to evaluate `toolchain_id` (empty: it can)."""
        try:
            self.target(toolchain_id)
        except TargetUnavailable as exc:
            return exc.missing
        return ()

    def _materialize(self, view: OperatorDefinition, files: Mapping[str, bytes]) -> Path:
        """The target's project template with the uploaded (already checked) files over it."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        project = Path(tempfile.mkdtemp(prefix="sub-", dir=self.scratch)) / "project"
        shutil.copytree(view.project_dir, project, ignore=shutil.ignore_patterns("build"))
        for rel, data in files.items():
            target = project / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return project

    async def evaluate(
        self,
        files: Mapping[str, bytes],
        team: str = "judge",
        *,
        toolchain: str = DEFAULT_TOOLCHAIN,
    ) -> dict[str, Any]:
        """Judge the files with `toolchain`; a failure that load can cause (a wall-clock
        timeout, marked not cacheable) is evaluated once more before it costs the team an
        official fail."""
        target = self.target(toolchain)
        project = await asyncio.to_thread(self._materialize, target.definition, files)
        attempts = 0
        try:
            while True:
                attempts += 1
                receipt = await target.evaluator.evaluate(project, team=team, kind="full")
                if receipt.status.passed or receipt.cacheable or attempts > LOAD_RETRIES:
                    break
        finally:
            await asyncio.to_thread(shutil.rmtree, project.parent, True)
        result = result_from_receipt(receipt, self.point_ids)
        result["evaluation"]["attempts"] = attempts
        return result

    async def close(self) -> None:
        for target in self.targets.values():
            await target.evaluator.pool.close()
