"""One case through the ascendc-cpu harness in the sandbox, and its verdict.

    harness_<dt> /sandbox/in /sandbox/out [--trace]

The harness of the case's dtype runs with the case folder read-only and one writable folder.
Its exit code says how it ended (0 ok, 5 tiling rejected, 6 outputs not written, 7 api_misuse
with misuse.json, 2/3 the harness refused its own inputs: our fault, never the candidate's);
outputs are checked on the host against the golden, for perf runs too, so a kernel cannot
earn cycles with wrong results. A perf run's cycles are run.json's `cycles.total`; its
trace.json is kept whole (a Chrome trace cut in the middle would not load) but gzip-compressed,
as the blob `<case>.trace.json.gz`: 7-12 MB of JSON per perf case shrinks ~15x at gzip level 3
(a third of level 6's CPU for 20 % more bytes), and Perfetto and chrome://tracing open gzipped
traces as they are. The gzip header has mtime 0 and no file name,
so the same trace is the same blob (`core.pipeline_trace.load_trace` reads one back).

A job's cases first run in batches, one sandbox per harness (`batch`); a case judged from a batch
is judged by the same code as a single run, and every other case runs alone, as above.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from justkernel.core.pipeline_trace import TRACE_SUFFIX
from justkernel.core.receipts import (
    CaseOutcome,
    CaseResult,
    CoreMakespan,
    CycleResult,
    LogRef,
    Misuse,
    OutputResult,
    PipeFigures,
    Pipeline,
)
from justkernel.operators import InputPack, OperatorDefinition, check_case_outputs
from justkernel.settings import redaction
from justkernel.toolchains.ascendc_cpu.batch import Done, run_batches
from justkernel.toolchains.ascendc_cpu.library import CYCLE_MODEL
from justkernel.toolchains.common import LogSink
from justkernel.toolchains.cpu.run import Verdict, _stream_logs
from justkernel.toolchains.cpu.run import classify as cpu_classify
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import SandboxLimits, SandboxResult, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked

HARNESS = "/sandbox/bin/harness"
EXIT_MISUSE = 7  # the other exit codes are the CPU harness's (operator.toml [harness])
MISUSE_FILE, RUN_FILE, TRACE_FILE = "misuse.json", "run.json", "trace.json"
MAX_MISUSE_BYTES = 64 << 10
MAX_RUN_BYTES = 4 << 20
MAX_TEXT = 500  # characters kept of a misuse message or site


class HarnessOutputError(ValueError):
    """run.json or misuse.json is missing or not what the harness writes."""


def _read_json(path: Path, limit: int) -> Any:
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise HarnessOutputError(f"{path.name}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise HarnessOutputError(f"{path.name}: larger than {limit} bytes")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HarnessOutputError(f"{path.name}: not JSON ({exc})") from None


def read_misuse(out_dir: Path) -> Misuse:
    data = _read_json(out_dir / MISUSE_FILE, MAX_MISUSE_BYTES)
    if not isinstance(data, dict):
        raise HarnessOutputError("misuse.json: not an object")
    fields = {k: data.get(k) for k in ("check", "message", "file", "line", "block")}
    for key in ("check", "message", "file"):
        if isinstance(fields[key], str):
            fields[key] = fields[key][:MAX_TEXT]
    try:
        return Misuse.model_validate(fields)
    except ValidationError as exc:
        raise HarnessOutputError(f"misuse.json: {exc.errors()[0]['msg']}") from None


def read_pipeline(out_dir: Path) -> Pipeline:
    """run.json (schema 1) as the receipt's pipeline section."""
    data = _read_json(out_dir / RUN_FILE, MAX_RUN_BYTES)
    try:
        cycles = data["cycles"]
        cores = [CoreMakespan(block=c["block"], makespan=c["makespan"]) for c in cycles["cores"]]
        slowest = max(cycles["cores"], key=lambda c: c["makespan"], default={})
        per_core = slowest.get("pipes", {}) if isinstance(slowest, dict) else {}
        pipes = {
            name: PipeFigures(
                busy=figures["busy"],
                utilisation=figures.get("utilisation"),
                instructions=per_core.get(name, {}).get("instructions"),
            )
            for name, figures in cycles["pipes"].items()
        }
        return Pipeline(
            model=CYCLE_MODEL,
            soc=str(data.get("soc", "")),
            total=cycles["total"],
            bound_pipe=cycles.get("bound_pipe"),
            block_dim=data.get("block_dim"),
            pipes=pipes,
            cores=cores,
            trace_truncated=bool(data.get("trace_truncated", False)),
        )
    except (KeyError, TypeError, AttributeError, ValidationError) as exc:
        raise HarnessOutputError(f"run.json: not the harness's format ({exc!r})") from None


def classify(
    r: SandboxResult, out_dir: Path, definition: OperatorDefinition
) -> tuple[Verdict, Misuse | None]:
    """Map a sandbox result and the harness exit code to a case outcome: exit 7 is this
    harness's own (api_misuse, misuse.json); everything else means what it means for the CPU
    harness (5 tiling rejected, 2/3 our fault, signals, limits: `cpu_run.classify`)."""
    if r.status is SandboxStatus.NONZERO_EXIT and r.exit_code == EXIT_MISUSE:
        try:
            misuse = read_misuse(out_dir)
        except HarnessOutputError as exc:
            return Verdict(CaseOutcome.CRASHED, f"api_misuse without a usable record: {exc}"), None
        detail = f"{misuse.check} at {misuse.site()}: {misuse.message}"
        return Verdict(CaseOutcome.API_MISUSE, detail), misuse
    return cpu_classify(r, definition), None


def keep_whole(sink: LogSink, name: str, path: Path) -> LogRef | None:
    """A harness file as a gzip blob, scrubbed like every log but never cut (the sandbox's
    file size limit already bounds it). Deterministic: mtime 0, no file name in the header."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    packed = gzip.compress(redaction.scrub_bytes(raw), compresslevel=3, mtime=0)
    digest = hashlib.sha256(packed).hexdigest()
    sink.folder.mkdir(parents=True, exist_ok=True)
    (sink.folder / digest).write_bytes(packed)
    return LogRef(name=name, sha256=digest, bytes=len(packed))


@dataclass(frozen=True)
class CaseRunner:
    """Runs the cases of one pack with the built harnesses (dtype -> executable)."""

    harnesses: dict[str, Path]
    pack: InputPack
    root: Path
    limits: SandboxLimits
    definition: OperatorDefinition
    logs: LogSink

    def dtype(self, case_id: str) -> str:
        return self.pack.entry(case_id).case.dtype

    async def _run(self, case_id: str, trace: bool) -> tuple[SandboxResult, Path]:
        harness = self.harnesses.get(self.dtype(case_id))
        if harness is None:
            raise ToolchainError(f"no harness built for {self.dtype(case_id)} ({case_id})")
        out_dir = self.root / case_id
        os.makedirs(out_dir, mode=0o755)
        argv = [HARNESS, "/sandbox/in", "/sandbox/out", *(["--trace"] if trace else [])]
        binds = {"bin/harness": harness, "in": self.pack.case_dir(case_id)}
        r = await run_checked(argv, ro_binds=binds, rw_dir=out_dir, limits=self.limits)
        return r, out_dir

    async def _judge(
        self, case_id: str, r: SandboxResult, out_dir: Path
    ) -> tuple[CaseResult, Verdict]:
        verdict, misuse = classify(r, out_dir, self.definition)
        result = CaseResult(
            case_id=case_id,
            outcome=verdict.outcome or CaseOutcome.PASSED,
            passed=False,
            detail=verdict.detail,
            wall_seconds=round(r.wall_seconds, 4),
            cpu_seconds=None if r.cpu_seconds is None else round(r.cpu_seconds, 4),
            misuse=misuse,
        )
        if verdict.outcome is None:
            check = await asyncio.to_thread(
                check_case_outputs, self.pack, case_id, out_dir, self.definition
            )
            result.outputs = [OutputResult(**o.to_dict()) for o in check.outputs]
            result.passed = check.passed
            if not check.passed:
                result.outcome = CaseOutcome.INCORRECT
                result.detail = check.message
        return result, verdict

    async def batch(
        self, case_ids: tuple[str, ...], trace: bool, parallelism: int
    ) -> dict[str, Done]:
        """The cases that exit 0 in batches (`batch.run_batches`); the rest run alone."""
        return await run_batches(
            self.harnesses, self.pack, case_ids, self.root, self.limits, trace, parallelism
        )

    async def _ran(
        self, case_id: str, trace: bool, done: Done | None
    ) -> tuple[SandboxResult, Path]:
        if done is not None:
            return done.result, done.out_dir
        return await self._run(case_id, trace)

    async def functional(
        self, case_id: str, done: Done | None = None
    ) -> tuple[CaseResult, Verdict]:
        """One functional case (judged from its batch when `done` is given, else run alone);
        logs are kept only when it did not pass."""
        r, out_dir = await self._ran(case_id, False, done)
        result, verdict = await self._judge(case_id, r, out_dir)
        if not result.passed:
            result.logs = _stream_logs(self.logs, case_id, r)
        return result, verdict

    async def perf(self, case_id: str, done: Done | None = None) -> tuple[CycleResult, Verdict]:
        """One perf case with --trace: the pipeline figures, the trace blob, the output check
        (judged from its batch when `done` is given, else run alone)."""
        r, out_dir = await self._ran(case_id, True, done)
        check, verdict = await self._judge(case_id, r, out_dir)
        refs = _stream_logs(self.logs, case_id, r) if not check.passed else []
        pipeline = None
        if check.passed:
            try:
                pipeline = await asyncio.to_thread(read_pipeline, out_dir)
            except HarnessOutputError as exc:
                check.outcome, check.passed = CaseOutcome.CRASHED, False
                check.detail = f"no usable run.json: {exc}"
            else:
                trace = await asyncio.to_thread(
                    keep_whole, self.logs, f"{case_id}{TRACE_SUFFIX}", out_dir / TRACE_FILE
                )
                if trace is None:
                    check.outcome, check.passed = CaseOutcome.CRASHED, False
                    check.detail = "the harness wrote no trace.json"
                    pipeline = None
                else:
                    refs.append(trace)
        result = CycleResult(
            case_id=case_id,
            est_cycles=pipeline.total if pipeline else None,
            counters=None,
            check=check,
            wall_seconds=round(r.wall_seconds, 3),
            logs=refs,
            pipeline=pipeline,
        )
        return result, verdict
