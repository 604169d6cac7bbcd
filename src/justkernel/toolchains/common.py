"""What every toolchain backend shares: its log files and the turning of stage results into
a receipt.

The status rules live here, so the cpu, ascendc-cpu and cann backends judge alike: the worst
case outcome decides a stage, the first failing stage decides the job, and after a case that hit
a limit the rest of its stage is not run. Logs are scrubbed of the lab's secrets and named by
their SHA-256 (`LogSink`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

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
from justkernel.settings import redaction

MAX_LOG_BYTES = 1 << 20  # a log longer than this keeps its head and tail


class LogSink:
    """One job's logs as files named by their SHA-256; the evaluator moves them to blobs.

    Every log is scrubbed of the lab's own secret values first: it is candidate output, and
    agents, events and exports read it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, name: str, data: bytes | str, truncated: bool = False) -> LogRef:
        raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
        raw = redaction.scrub_bytes(raw)
        if len(raw) > MAX_LOG_BYTES:
            half = MAX_LOG_BYTES // 2
            raw = raw[:half] + b"\n[... truncated ...]\n" + raw[-half:]
            truncated = True
        digest = hashlib.sha256(raw).hexdigest()
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / digest).write_bytes(raw)
        return LogRef(name=name, sha256=digest, bytes=len(raw), truncated=truncated)


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
