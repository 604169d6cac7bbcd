"""A job's cases in one sandbox per harness (one fork per case), and the rule that keeps receipts
what single runs make them.

    harness --batch [--trace] --case-wall S --case-cpu S /sandbox/in/<case>:/sandbox/out/<case> ...

A sandbox costs ~25-70 ms (subreaper, prlimit, setpriv, bwrap, seccomp, staging, the /proc scan)
on top of ~45 ms of harness CPU for a functional case, so each dtype's cases run in one sandbox
(`parallelism` of them at a time, the cases dealt round-robin). The harness's parent forks one
child per case, in order; the child runs exactly what a single run does (fresh process state by
construction), under the per-case CPU limit (RLIMIT_CPU in the child) and the per-case wall limit
(the parent kills it). After a case that hit a limit the parent starts no more.

The re-run rule: only a case whose child exited 0, with the files the host reads unchanged since
the parent saw that child end, is judged from the batch (outputs against the goldens, run.json,
trace.json, its stdout/stderr as the logs, exactly as for a single run). Every other case (a
non-zero exit, a signal, a timeout, not started, a status missing or odd, a changed file, or a
batch sandbox that ended in anything but ok) is run again alone, the old way, and that single
run decides its result. So every failure, misuse record, status and detail in a receipt is the
one a single run gives; the batch only ever speeds up cases that exit 0.

Threat model. Team code runs in every child, and all children of a batch share one writable
mount: a child can write into another case's out folder, signal the parent (same uid) or leave
processes behind. None of that can make a case pass that a single run fails:

- A child cannot write the parent's report: the parent reports on its own stdout, once every
  child is gone, as the last line (children's stdout/stderr are files in their out folders, and
  the parent is non-dumpable, so a child cannot open /proc/<parent>/fd or /proc/<parent>/mem).
  The host reads only that last line. A fake status file in an out folder is never read.
- The parent is a child subreaper: after each case it kills and reaps whatever the child left
  (`clear_leftovers`); if it cannot, it exits 70 without a report and every case is re-run.
- Files written into another case's folder: right after a case's child is gone the parent notes
  its files (inode, size, mode, links, mtime, ctime) and waits until the clock that stamps ctime
  has moved past them before it starts the next child; at the end it compares. A process cannot
  set ctime, so a later child that rewrites or replaces an earlier case's files makes that case
  `intact: false`, and it is re-run alone. An earlier child's files in a later case's folder are
  overwritten by the later case's own harness (the names are the ones it writes) or make it
  fail (re-run alone). (Digests would do too, but hashing ~60 MB of outputs and traces per
  candidate twice costs ~0.3 s of CPU; the marks cost a few stats.)
- The parent ends with _exit: no static destructor (team code) runs in it after the report.
  Its only team code is the static initialisers, which ran before main, as in a single run.
- Killing or stopping the parent ends the batch abnormally (crashed, timeout): every case of it
  is re-run alone. A case that fails alone fails; outputs are always checked on the host against
  goldens the sandbox never sees.

What remains is what a single run already has: team code that gets arbitrary code execution
can corrupt its own harness's memory (docs/security.md, docs/simulation-and-judging.md); in a
batch that includes the parent, through static initialisers, which run before main in any case.
The marks assume the real-time clock is not stepped back while a batch runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.operators import InputPack
from justkernel.settings import redaction
from justkernel.toolchains.sandbox import (
    CapturedStream,
    SandboxLimits,
    SandboxResult,
    SandboxStatus,
)
from justkernel.toolchains.sandbox.checked import run_checked

HARNESS = "/sandbox/bin/harness"
REPORT_PREFIX = "jk-batch "  # the parent's one report line, last on its stdout
STDOUT, STDERR = "harness.stdout", "harness.stderr"  # a child's streams, in its out folder
WALL_CAP = 4  # a batch's wall limit: per-case wall x cases, at most this many per-case walls
WALL_SLACK = 5.0  # seconds for the parent's own work (digests, forks) on top
BATCH_MIN = 2  # fewer cases than this: a batch saves nothing


@dataclass(frozen=True)
class Done:
    """A case judged from its batch: the result a single run would report, and its out folder."""

    result: SandboxResult
    out_dir: Path


def batch_limits(case: SandboxLimits, cases: int) -> SandboxLimits:
    """The batch sandbox's limits: the per-case ones scaled by the cases, the wall capped (a
    batch that runs out is re-run case by case, so the cap only costs time, never a result)."""
    wall = min(case.wall_seconds * cases, case.wall_seconds * WALL_CAP) + WALL_SLACK
    return dataclasses.replace(
        case, wall_seconds=wall, cpu_seconds=max(1, int(case.cpu_seconds)) * cases + 1
    )


def batch_argv(case_ids: list[str], trace: bool, case: SandboxLimits) -> list[str]:
    pairs = [f"/sandbox/in/{c}:/sandbox/out/{c}" for c in case_ids]
    wall, cpu = f"{case.wall_seconds:g}", str(max(1, int(case.cpu_seconds)))
    flags = ["--trace"] if trace else []
    return [HARNESS, "--batch", *flags, "--case-wall", wall, "--case-cpu", cpu, *pairs]


def single_argv(case_id: str, trace: bool) -> list[str]:
    """What a single run of the case would have been (for the synthetic result)."""
    return [HARNESS, "/sandbox/in", "/sandbox/out", *(["--trace"] if trace else [])]


def read_report(stdout: str, expected: int) -> list[dict[str, Any]] | None:
    """The parent's last line, if it is a report of `expected` cases; None otherwise."""
    lines = stdout.rstrip("\n").rsplit("\n", 1)
    last = lines[-1] if lines else ""
    if not last.startswith(REPORT_PREFIX):
        return None
    try:
        data = json.loads(last.removeprefix(REPORT_PREFIX))
    except json.JSONDecodeError:
        return None
    cases = data.get("cases") if isinstance(data, dict) else None
    if data.get("schema") != 1 or not isinstance(cases, list) or len(cases) != expected:
        return None
    return cases if all(isinstance(c, dict) for c in cases) else None


def _stream(path: Path, cap: int) -> CapturedStream:
    """A child's stream file as the sandbox would have captured it (`sandbox.exec._Capture`:
    the first and last cap // 2 bytes), scrubbed like every captured stream."""
    half = max(1, cap // 2)
    try:
        total = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(half)
            tail = b""
            if total > half:
                f.seek(max(half, total - half))
                tail = f.read(half)
    except OSError:
        total, head, tail = 0, b"", b""
    kept = len(head) + len(tail)
    text = head.decode("utf-8", "replace")
    if total > kept:
        text += f"\n[... {total - kept} bytes omitted ...]\n"
    text += tail.decode("utf-8", "replace")
    return CapturedStream(text=redaction.scrub(text), total_bytes=total, truncated=total > kept)


def judged_alone(entry: dict[str, Any]) -> bool:
    """True when the case must be run again alone: anything but exit 0 with its files as the
    parent noted them when its child ended."""
    return not (
        entry.get("state") == "exit" and entry.get("code") == 0 and entry.get("intact") is True
    )


def _case_result(
    entry: dict[str, Any], out_dir: Path, batch: SandboxResult, argv: list[str], cap: int
) -> SandboxResult:
    def seconds(key: str) -> float:
        value = entry.get(key)
        return float(value) if isinstance(value, int | float) else 0.0

    return SandboxResult(
        status=SandboxStatus.OK,
        exit_code=0,
        signal=None,
        wall_seconds=seconds("wall_seconds"),
        cpu_seconds=seconds("cpu_seconds"),
        stdout=_stream(out_dir / STDOUT, cap),
        stderr=_stream(out_dir / STDERR, cap),
        command=batch.command,
        sandbox_argv=argv,
        sandbox_uid=batch.sandbox_uid,
    )


def _judge_batch(
    r: SandboxResult, case_ids: list[str], out_root: Path, trace: bool, cap: int
) -> dict[str, Done]:
    if r.status is not SandboxStatus.OK:
        return {}
    entries = read_report(r.stdout.text, len(case_ids))
    if entries is None:
        return {}
    done = {}
    for case_id, entry in zip(case_ids, entries, strict=True):
        out_dir = out_root / case_id
        if entry.get("out") != f"/sandbox/out/{case_id}" or judged_alone(entry):
            continue
        done[case_id] = Done(
            _case_result(entry, out_dir, r, single_argv(case_id, trace), cap), out_dir
        )
    return done


def _batchable(case_id: str) -> bool:
    return bool(case_id) and not set(case_id) & {"/", ":", "\0"} and case_id not in (".", "..")


def deal(case_ids: list[str], ways: int) -> list[list[str]]:
    """Round-robin into at most `ways` non-empty batches, each in case order."""
    ways = max(1, min(ways, len(case_ids)))
    return [b for b in (case_ids[k::ways] for k in range(ways)) if b]


async def run_batches(
    harnesses: dict[str, Path],
    pack: InputPack,
    case_ids: tuple[str, ...],
    root: Path,
    limits: SandboxLimits,
    trace: bool,
    parallelism: int,
) -> dict[str, Done]:
    """The cases judged from batches: per dtype, the cases dealt into `parallelism` batches,
    `parallelism` sandboxes at a time. A case left out is for the caller to run alone."""
    by_dtype: dict[str, list[str]] = {}
    for case_id in case_ids:
        dtype = pack.entry(case_id).case.dtype
        if dtype in harnesses and _batchable(case_id):
            by_dtype.setdefault(dtype, []).append(case_id)
    batches = [
        (dtype, batch)
        for dtype, ids in by_dtype.items()
        if len(ids) >= BATCH_MIN
        for batch in deal(ids, parallelism)
    ]
    gate = asyncio.Semaphore(max(1, parallelism))

    async def one(k: int, dtype: str, batch: list[str]) -> dict[str, Done]:
        async with gate:
            out_root = root / f".batch-{k}"
            os.makedirs(out_root, mode=0o755)
            for case_id in batch:
                os.makedirs(out_root / case_id, mode=0o755)
            binds = {"bin/harness": harnesses[dtype]}
            binds.update({f"in/{c}": pack.case_dir(c) for c in batch})
            r = await run_checked(
                batch_argv(batch, trace, limits),
                ro_binds=binds,
                rw_dir=out_root,
                limits=batch_limits(limits, len(batch)),
            )
            return await asyncio.to_thread(
                _judge_batch, r, batch, out_root, trace, limits.capture_bytes
            )

    done: dict[str, Done] = {}
    for found in await asyncio.gather(*(one(k, d, b) for k, (d, b) in enumerate(batches))):
        done.update(found)
    return done
