"""Turning the stage results of one CPU job into its receipt.

The status rules live here: the worst case outcome decides a stage, the first failing stage
decides the job, and after a case that hit a limit the rest of its stage is not run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    CompileReport,
    CycleResult,
    Executor,
    LogRef,
    Receipt,
    StageDurations,
    Status,
    utc_now,
)
from justkernel.toolchains.cpu.run import LogSink

# Worst first: the status of a stage is the worst outcome among its cases.
SEVERITY = (
    CaseOutcome.SANDBOX_VIOLATION,
    CaseOutcome.CRASHED,
    CaseOutcome.API_MISUSE,  # ascendc-cpu only: deterministic, what real hardware punishes
    CaseOutcome.RESOURCE_LIMIT,
    CaseOutcome.TIMEOUT,
    CaseOutcome.INCORRECT,
)
# After one of these, the remaining cases of the stage are not run (each could cost a limit).
STOP_AFTER = {CaseOutcome.SANDBOX_VIOLATION, CaseOutcome.RESOURCE_LIMIT, CaseOutcome.TIMEOUT}


def not_run(case_id: str) -> CaseResult:
    return CaseResult(
        case_id=case_id,
        outcome=CaseOutcome.NOT_RUN,
        passed=None,
        detail="not run after an earlier case hit a limit",
    )


def worst(cases: Sequence[CaseResult]) -> tuple[Status, str] | None:
    """The stage status from its cases (worst outcome wins) and a one-line reason."""
    for outcome in SEVERITY:
        hit = [c for c in cases if c.outcome is outcome]
        if hit:
            ids = ", ".join(c.case_id for c in hit[:6]) + (" ..." if len(hit) > 6 else "")
            first = f" ({hit[0].detail})" if hit[0].detail else ""
            ran = sum(1 for c in cases if c.passed is not None)
            return Status(outcome.value), f"{outcome.value} on {len(hit)} of {ran}: {ids}{first}"
    return None


class Draft:
    """What a receipt collects while the stages run."""

    def __init__(self, spec: JobSpec, executor: Executor, sink: LogSink) -> None:
        self.spec = spec
        self.executor = executor
        self.sink = sink
        self.logs: list[LogRef] = []
        self.cases: list[CaseResult] = []
        self.cycles: list[CycleResult] = []
        self.total_est_cycles: int | None = None
        self.durations = StageDurations()
        self.started_at = utc_now()
        self._t0 = time.monotonic()

    def finish(
        self, status: Status, detail: str, cacheable: bool, report: CompileReport
    ) -> Receipt:
        self.durations.total = time.monotonic() - self._t0
        spec = self.spec
        return Receipt(
            job_key=spec.job_key(),
            operator=spec.operator,
            kind=spec.kind,
            status=status,
            detail=detail,
            source_sha256=spec.source_tree_hash,
            input_packs=dict(spec.input_packs),
            case_ids=list(spec.case_ids),
            perf_case_ids=list(spec.perf_case_ids),
            cases=self.cases,
            cycles=self.cycles,
            total_est_cycles=self.total_est_cycles,
            compile=report,
            durations=self.durations,
            executor=self.executor,
            logs=self.logs,
            started_at=self.started_at,
            finished_at=utc_now(),
            cacheable=cacheable,
        )
