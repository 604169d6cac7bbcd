"""Receipts: the evidence behind every number a candidate earns.

A receipt says what ran (source tree SHA-256, input pack hashes, case ids, toolchain id and
version), where (host, slot, gcc/valgrind versions, sandbox), what came out (status, per-case
precision results, cycle counters) and where the logs are (blob SHA-256s). It is plain JSON, so
it can be cached, sent over the wire by a remote worker and shown without re-running anything.
A figure that was not measured is `None`, never 0.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

RECEIPT_SCHEMA = 1


class JobKind(StrEnum):
    """probe: some functional cases, no simulation. full: every local case plus cycles."""

    PROBE = "probe"
    FULL = "full"


class Status(StrEnum):
    """How one evaluation ended; the first failing stage decides."""

    STATIC_CHECK_FAILED = "static_check_failed"  # forbidden file changed, bad object, ...
    COMPILE_FAILED = "compile_failed"
    INCORRECT = "incorrect"  # outputs outside the precision standard (or tiling rejected)
    TIMEOUT = "timeout"  # wall clock or CPU limit
    CRASHED = "crashed"  # killed by a signal or an abnormal harness exit
    RESOURCE_LIMIT = "resource_limit"  # address space or file size limit
    SANDBOX_VIOLATION = "sandbox_violation"  # guard zone written, forbidden syscall, ...
    API_MISUSE = "api_misuse"  # ascendc-cpu: an Ascend C call real hardware would punish
    PROBE_PASSED = "probe_passed"  # a probe whose every case passed (no cycles by design)
    MEASURED = "measured"  # a full job: all cases passed and every perf case has cycles
    TOOLCHAIN_UNAVAILABLE = "toolchain_unavailable"  # e.g. no CANN here; detail names what

    @property
    def passed(self) -> bool:
        return self in (Status.PROBE_PASSED, Status.MEASURED)


class CaseOutcome(StrEnum):
    PASSED = "passed"
    INCORRECT = "incorrect"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    RESOURCE_LIMIT = "resource_limit"
    SANDBOX_VIOLATION = "sandbox_violation"
    API_MISUSE = "api_misuse"  # the harness reported a misuse (see CaseResult.misuse)
    NOT_RUN = "not_run"  # skipped after an earlier case timed out or violated the sandbox


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogRef(_Model):
    """A log kept in the blob store; `truncated` when only head and tail were kept."""

    name: str
    sha256: str
    bytes: int
    truncated: bool = False


class OutputResult(_Model):
    """Precision verdict for one output tensor (see operators.precision)."""

    name: str
    passed: bool
    elements: int
    failures: int
    allowed_failures: int
    error_ratio: float | None
    max_abs_error: float | None
    max_rel_error: float | None
    nan_count: int
    first_failures: list[int] = Field(default_factory=list)
    message: str = ""

    @field_validator("error_ratio", "max_abs_error", "max_rel_error", mode="before")
    @classmethod
    def _finite_or_none(cls, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value


class Misuse(_Model):
    """The first Ascend C misuse the ascendc-cpu harness saw in one run: which fixed check
    fired, where the kernel or tiling code called it (file relative to the project), why."""

    check: str
    message: str
    file: str | None = None
    line: int | None = None
    block: int | None = None  # the AI Core (GetBlockIdx) that misused the API

    def site(self) -> str:
        if self.file is None:
            return "unknown site"
        return self.file if self.line is None else f"{self.file}:{self.line}"


class CaseResult(_Model):
    case_id: str
    outcome: CaseOutcome
    passed: bool | None  # None: not run
    outputs: list[OutputResult] = Field(default_factory=list)
    detail: str = ""  # how the run ended when it did not pass ("signal SIGSEGV", ...)
    wall_seconds: float | None = None
    cpu_seconds: float | None = None
    logs: list[LogRef] = Field(default_factory=list)
    misuse: Misuse | None = None  # outcome api_misuse: the harness's record


class CycleCounters(_Model):
    """Callgrind totals inside the kernel entry (cache simulation on)."""

    Ir: int
    Dr: int
    Dw: int
    I1mr: int
    D1mr: int
    D1mw: int
    ILmr: int
    DLmr: int
    DLmw: int


class PipeFigures(_Model):
    """One pipe of the slowest core: busy cycles and busy / that core's makespan."""

    busy: int
    utilisation: float | None = None
    instructions: int | None = None


class CoreMakespan(_Model):
    block: int
    makespan: int


class Pipeline(_Model):
    """The ascendc-cpu cycle model's view of one perf case (run.json of the harness): total =
    the makespan of the slowest AI Core; the pipes and the bound pipe are that core's."""

    model: str  # cycle model version
    soc: str
    total: int
    bound_pipe: str | None = None
    block_dim: int | None = None
    pipes: dict[str, PipeFigures] = Field(default_factory=dict)
    cores: list[CoreMakespan] = Field(default_factory=list)
    trace_truncated: bool = False


class CycleResult(_Model):
    """One perf case under the simulator; `est_cycles` is None when it was not measured.
    `counters` are callgrind's (cpu toolchain), `pipeline` the Ascend C model's (ascendc-cpu)."""

    case_id: str
    est_cycles: int | None
    counters: CycleCounters | None
    check: CaseResult
    wall_seconds: float | None = None
    logs: list[LogRef] = Field(default_factory=list)
    pipeline: Pipeline | None = None


class CompileReport(_Model):
    ok: bool
    failed_step: str | None = None  # kernel, tiling, link, static_check
    diagnostics_head: list[str] = Field(default_factory=list)  # first lines of gcc's output
    problems: list[str] = Field(default_factory=list)  # static check findings


class StageDurations(_Model):
    """Seconds per stage; None for a stage that did not run."""

    snapshot: float | None = None
    queued: float | None = None
    static_check: float | None = None
    compile: float | None = None
    functional: float | None = None
    simulate: float | None = None
    total: float | None = None


class Executor(_Model):
    host: str
    worker: str = "local"
    slot: int | None = None
    toolchain_id: str
    toolchain_version: str
    gcc: str | None = None
    valgrind: str | None = None
    sandbox: str | None = None
    cpu_model: str | None = None


class Receipt(_Model):
    schema_version: int = RECEIPT_SCHEMA
    job_key: str
    operator: str
    kind: JobKind
    team: str | None = None
    status: Status
    detail: str = ""  # one line: why this status
    source_sha256: str
    input_packs: dict[str, str]  # role ("local", "perf") -> pack hash
    case_ids: list[str]
    perf_case_ids: list[str] = Field(default_factory=list)
    cases: list[CaseResult] = Field(default_factory=list)
    cycles: list[CycleResult] = Field(default_factory=list)
    total_est_cycles: int | None = None  # sum over perf cases, only when all were measured
    compile: CompileReport | None = None
    misuse: Misuse | None = None  # status api_misuse: the first case's misuse record
    durations: StageDurations = Field(default_factory=StageDurations)
    executor: Executor
    logs: list[LogRef] = Field(default_factory=list)
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    cacheable: bool = False  # deterministic outcome: an identical job would give the same
    cache_hit: bool = False

    def all_logs(self) -> list[LogRef]:
        """Every blob this receipt refers to (job, cases and simulations)."""
        refs = list(self.logs)
        for case in self.cases:
            refs += case.logs
        for cycle in self.cycles:
            refs += cycle.logs + cycle.check.logs
        return refs

    def failing_cases(self) -> list[str]:
        """Ids of functional and perf cases that ran and did not pass."""
        checks = self.cases + [c.check for c in self.cycles]
        return [c.case_id for c in checks if c.passed is False]


def utc_now() -> datetime:
    return datetime.now(UTC)
