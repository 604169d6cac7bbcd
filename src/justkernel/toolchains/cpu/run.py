"""Run the built harness on one case inside the sandbox, natively or under callgrind, and judge it.

Every run sees the same fixed world: the harness at /sandbox/bin/harness, the case's inputs
read-only at /sandbox/in, and one writable folder, /sandbox/out, for its outputs. The goldens
are never mounted. The outputs are checked on the host with the precision standard, for
simulated runs too, so a kernel cannot behave differently under the simulator and still count.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    CycleCounters,
    CycleResult,
    LogRef,
    OutputResult,
)
from justkernel.operators import (
    InputPack,
    OperatorDefinition,
    check_case_outputs,
    exit_status,
    harness_argv,
)
from justkernel.toolchains.common import LogSink
from justkernel.toolchains.cpu.simulate import (
    CALLGRIND_OUT,
    CallgrindParseError,
    callgrind_argv,
    est_cycles,
    parse_callgrind,
)
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import SandboxLimits, SandboxResult, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked

HARNESS = "/sandbox/bin/harness"
# valgrind's own summary lines ("==2== Events    : Ir Dr ...", "==2== Collected : 1 2 ...")
_SUMMARY = re.compile(r"^==\d+== (Events|Collected)\s*: ([\w ]+)$", re.MULTILINE)


@dataclass(frozen=True)
class Verdict:
    """How a run ended: `outcome` None means it finished normally (check the outputs)."""

    outcome: CaseOutcome | None
    detail: str = ""
    cacheable: bool = True


def classify(r: SandboxResult, definition: OperatorDefinition) -> Verdict:
    """Map a sandbox result and the harness exit code to a case outcome."""
    if r.status is SandboxStatus.OK:
        return Verdict(None)
    if r.status is SandboxStatus.SANDBOX_VIOLATION:
        return Verdict(CaseOutcome.SANDBOX_VIOLATION, "; ".join(r.violations))
    if r.status is SandboxStatus.TIMEOUT:  # wall clock: may depend on load, never cached
        return Verdict(CaseOutcome.TIMEOUT, f"wall clock limit ({r.wall_seconds:.1f} s)", False)
    if r.status is SandboxStatus.RESOURCE_LIMIT:
        if r.resource == "cpu":
            return Verdict(CaseOutcome.TIMEOUT, f"CPU time limit ({r.cpu_seconds or 0:.1f} s)")
        return Verdict(CaseOutcome.RESOURCE_LIMIT, f"{r.resource} limit")
    if r.status is SandboxStatus.CRASHED:
        return Verdict(CaseOutcome.CRASHED, f"killed by {r.signal_name}")
    code = r.exit_code if r.exit_code is not None else -1
    name = exit_status(code, definition)
    last = _last_line(r.stderr.text)
    if name == "guard_violation":
        return Verdict(CaseOutcome.SANDBOX_VIOLATION, f"wrote outside its buffers: {last}")
    if name == "tiling_rejected":
        return Verdict(CaseOutcome.INCORRECT, f"tiling rejected the case: {last}")
    if name in ("usage", "bad_case"):
        raise ToolchainError(f"the harness refused its own inputs ({name}): {last}")
    return Verdict(CaseOutcome.CRASHED, f"{name}: {last}" if last else name)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if not line.startswith("==")]
    return lines[-1][:300] if lines else ""


def _program() -> list[str]:
    return harness_argv(Path(HARNESS), Path("/sandbox/in"), Path("/sandbox/out"))


async def _run(
    argv: list[str], harness: Path, case_dir: Path, out_dir: Path, limits: SandboxLimits
) -> SandboxResult:
    os.makedirs(out_dir, mode=0o755)
    binds = {"bin/harness": harness, "in": case_dir}
    return await run_checked(argv, ro_binds=binds, rw_dir=out_dir, limits=limits)


async def _judge(
    r: SandboxResult,
    pack: InputPack,
    case_id: str,
    out_dir: Path,
    definition: OperatorDefinition,
) -> tuple[CaseResult, Verdict]:
    verdict = classify(r, definition)
    result = CaseResult(
        case_id=case_id,
        outcome=verdict.outcome or CaseOutcome.PASSED,
        passed=False,
        detail=verdict.detail,
        wall_seconds=round(r.wall_seconds, 4),
        cpu_seconds=None if r.cpu_seconds is None else round(r.cpu_seconds, 4),
    )
    if verdict.outcome is None:
        check = await asyncio.to_thread(check_case_outputs, pack, case_id, out_dir, definition)
        result.outputs = [OutputResult(**o.to_dict()) for o in check.outputs]
        result.passed = check.passed
        if not check.passed:
            result.outcome = CaseOutcome.INCORRECT
            result.detail = check.message
    return result, verdict


def _stream_logs(logs: LogSink, case_id: str, r: SandboxResult) -> list[LogRef]:
    refs = []
    for name, stream in (("stdout", r.stdout), ("stderr", r.stderr)):
        if stream.total_bytes:
            refs.append(logs.put(f"{case_id}.{name}", stream.text, stream.truncated))
    return refs


def _collected(stderr: str) -> list[int] | None:
    """valgrind's own last `Collected :` line: what it counted, whatever the kernel wrote."""
    found = None
    for m in _SUMMARY.finditer(stderr):
        if m.group(1) == "Collected":
            found = [int(x) for x in m.group(2).split()]
    return found


def _ordered(c: CycleCounters, stderr: str) -> list[int] | None:
    """The counters in the order of valgrind's `Events :` line."""
    names = None
    for m in _SUMMARY.finditer(stderr):
        if m.group(1) == "Events":
            names = m.group(2).split()
    if names is None:
        return None
    values = c.model_dump()
    return [values[n] for n in names if n in values]


@dataclass(frozen=True)
class CaseRunner:
    """Runs the cases of one pack with one built harness; outputs go to `root/<case_id>/`."""

    harness: Path
    pack: InputPack
    root: Path
    limits: SandboxLimits
    definition: OperatorDefinition
    logs: LogSink

    async def _sandboxed(self, argv: list[str], case_id: str) -> SandboxResult:
        return await _run(
            argv, self.harness, self.pack.case_dir(case_id), self.root / case_id, self.limits
        )

    async def functional(self, case_id: str) -> tuple[CaseResult, Verdict]:
        """One functional case, natively; logs are kept only when it did not pass."""
        r = await self._sandboxed(_program(), case_id)
        result, verdict = await _judge(r, self.pack, case_id, self.root / case_id, self.definition)
        if not result.passed:
            result.logs = _stream_logs(self.logs, case_id, r)
        return result, verdict

    async def simulate(self, case_id: str) -> tuple[CycleResult, Verdict]:
        """One perf case under callgrind: counters, est. cycles, and the output check."""
        argv = callgrind_argv(self.definition.build.kernel_entry, _program())
        r = await self._sandboxed(argv, case_id)
        check, verdict = await _judge(r, self.pack, case_id, self.root / case_id, self.definition)
        refs = _stream_logs(self.logs, case_id, r)
        counters = self._counters(case_id, r, check, refs) if verdict.outcome is None else None
        measured = counters if check.passed else None
        result = CycleResult(
            case_id=case_id,
            est_cycles=est_cycles(measured) if measured else None,
            counters=measured,
            check=check,
            wall_seconds=round(r.wall_seconds, 3),
            logs=refs,
        )
        return result, verdict

    def _counters(
        self, case_id: str, r: SandboxResult, check: CaseResult, refs: list[LogRef]
    ) -> CycleCounters | None:
        """Counters from callgrind.out, cross-checked with valgrind's own stderr summary; a
        missing or forged file marks the check failed."""
        try:
            text = (self.root / case_id / Path(CALLGRIND_OUT).name).read_text(errors="replace")
            refs.append(self.logs.put(f"{case_id}.callgrind.out", text))
            counters = parse_callgrind(text)
        except (OSError, CallgrindParseError) as exc:
            check.outcome, check.passed = CaseOutcome.CRASHED, False
            check.detail = f"no usable callgrind output: {exc}"
            return None
        seen = _collected(r.stderr.text)
        if seen is None or seen != _ordered(counters, r.stderr.text):
            check.outcome, check.passed = CaseOutcome.SANDBOX_VIOLATION, False
            check.detail = "callgrind output differs from valgrind's own summary"
            return None
        return counters
