"""One submission on the hidden points: template + uploaded files ─► lab evaluator ─► points.

The judge uses the lab's own pipeline (the CPU toolchain, its sandbox, receipts and cache)
with the hidden case set in place of the local one: functional check of all 15 points, then
callgrind on all 15 (each point's time is measured, none is estimated from another). A point's
`time_us` is the cycle model's est_cycles / 1000, i.e. microseconds at a nominal 1 GHz; it is
labelled as such in every result. What the judge did not measure stays None: the toolchain
simulates only candidates that passed every functional point, so a failing candidate has no
times, and `prof_sum_us` exists only when every point passed and was timed. A failure that
load can cause (a wall-clock timeout: the receipt is not cacheable) is evaluated once more
before it becomes an official fail.

Nothing from the run's text (stderr, details, case notes) reaches a result: a kernel could
print the hidden shapes there. Only compile diagnostics are passed on; gcc never sees a case.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.core.receipts import CaseResult, CycleResult, Receipt, Status
from justkernel.judge.paths import JudgeFolder
from justkernel.operators import CaseSpec, OperatorDefinition
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import CpuToolchain
from justkernel.workers.evaluator import CaseSets, Evaluator
from justkernel.workers.pool import LocalPool

TIME_SOURCE = (
    "cycle-model: callgrind est_cycles / 1000 at a nominal 1 GHz on the CPU port (not NPU time)"
)
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


def result_from_receipt(receipt: Receipt, point_ids: Sequence[str]) -> dict[str, Any]:
    """The judge's answer for one receipt of the hidden points (best times are added by the
    store). Shapes, inputs and run output never appear in it."""
    cases = {c.case_id: c for c in receipt.cases}
    cycles = {c.case_id: c for c in receipt.cycles}
    points = [_point(pid, receipt, cases.get(pid), cycles.get(pid)) for pid in point_ids]
    complete = all(p["passed"] and p["time_us"] is not None for p in points)
    diagnostics: list[str] = []
    if receipt.status in (Status.COMPILE_FAILED, Status.STATIC_CHECK_FAILED) and receipt.compile:
        diagnostics = (receipt.compile.problems + receipt.compile.diagnostics_head)[
            :MAX_DIAGNOSTIC_LINES
        ]
    return {
        "verdict": "pass" if all(p["passed"] for p in points) else "fail",
        "outcome": receipt.status.value,
        "points": points,
        "prof_sum_us": sum(p["time_us"] for p in points) if complete else None,
        "time_source": TIME_SOURCE,
        "diagnostics": diagnostics,
        "evaluation": {
            "toolchain": receipt.executor.toolchain_id,
            "toolchain_version": receipt.executor.toolchain_version,
            "receipt_key": receipt.job_key,
            "source_sha256": receipt.source_sha256,
            "cache_hit": receipt.cache_hit,
            "seconds": receipt.durations.total,
        },
    }


@dataclass
class JudgeEvaluation:
    """The judge's evaluator: the lab pipeline on the hidden points, in the judge's work dir."""

    definition: OperatorDefinition
    hidden: tuple[CaseSpec, ...]
    evaluator: Evaluator
    scratch: Path

    @classmethod
    def create(
        cls,
        folder: JudgeFolder,
        definition: OperatorDefinition,
        hidden: Sequence[CaseSpec],
        *,
        sim_parallelism: int = 2,
    ) -> JudgeEvaluation:
        hidden = tuple(hidden)
        work = folder.work_dir
        settings = Settings(data_dir=work / "lab", config_dir=folder.root / "config")
        toolchain = CpuToolchain(definition, cache_dir=work / "lab" / "toolchains" / "cpu")
        evaluator = Evaluator(
            settings,
            LocalPool(slots=1),
            toolchain,
            BlobStore(settings.blobs_dir),
            sim_parallelism=sim_parallelism,
            cases=CaseSets(local=hidden, perf=hidden),
        )
        return cls(definition, hidden, evaluator, work / "submissions")

    @property
    def point_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.hidden)

    def _materialize(self, files: Mapping[str, bytes]) -> Path:
        """The operator template with the uploaded (already checked) files laid over it."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        project = Path(tempfile.mkdtemp(prefix="sub-", dir=self.scratch)) / "project"
        shutil.copytree(
            self.definition.project_dir, project, ignore=shutil.ignore_patterns("build")
        )
        for rel, data in files.items():
            target = project / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return project

    async def evaluate(self, files: Mapping[str, bytes], team: str = "judge") -> dict[str, Any]:
        """Judge the files; a failure that load can cause (a wall-clock timeout, marked not
        cacheable) is evaluated once more before it costs the team an official fail."""
        project = await asyncio.to_thread(self._materialize, files)
        attempts = 0
        try:
            while True:
                attempts += 1
                receipt = await self.evaluator.evaluate(project, team=team, kind="full")
                if receipt.status.passed or receipt.cacheable or attempts > LOAD_RETRIES:
                    break
        finally:
            await asyncio.to_thread(shutil.rmtree, project.parent, True)
        result = result_from_receipt(receipt, self.point_ids)
        result["evaluation"]["attempts"] = attempts
        return result

    async def close(self) -> None:
        await self.evaluator.pool.close()
