"""Running the compiled harness on a case folder, and naming how a run ended.

`harness_argv` is the seam for the sandbox: the toolchain wraps that argv in its own isolation
(timeout, prlimit, bubblewrap, valgrind); `run_harness` is the plain native run used by tests and
trusted local tools.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.operators.definition import OperatorDefinition, load_operator
from justkernel.operators.pack import InputPack


@dataclass(frozen=True)
class HarnessRun:
    case_id: str
    out_dir: Path
    returncode: int  # negative: killed by that signal
    status: str  # "ok", "timeout", "guard_violation", "tiling_rejected", "signal SIGSEGV", ...
    stdout: str
    stderr: str
    seconds: float  # wall time of the whole process

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def run_info(self) -> dict[str, Any] | None:
        """The harness's own run.json (kernel times per repetition), if it got that far."""
        path = self.out_dir / "run.json"
        return json.loads(path.read_text()) if self.ok and path.is_file() else None


def harness_argv(
    harness: Path,
    case_dir: Path,
    out_dir: Path,
    reps: int = 1,
    flush_bytes: int | None = None,
) -> list[str]:
    """`harness <case_dir> <out_dir> --reps N [--flush-bytes N]` (out_dir must exist)."""
    argv = [str(harness), str(case_dir), str(out_dir), "--reps", str(reps)]
    if flush_bytes is not None:
        argv += ["--flush-bytes", str(flush_bytes)]
    return argv


def exit_status(returncode: int, definition: OperatorDefinition | None = None) -> str:
    """Name a harness exit: its own codes by name, signals as `signal SIGxxx`."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    codes = (definition or load_operator()).harness.exit_codes.model_dump()
    for name, code in codes.items():
        if code == returncode:
            return name
    return f"exit {returncode}"


def run_harness(
    harness: Path,
    case_dir: Path,
    out_dir: Path,
    reps: int = 1,
    flush_bytes: int | None = None,
    timeout: float = 60.0,
    definition: OperatorDefinition | None = None,
) -> HarnessRun:
    """Run one case natively (creates `out_dir`); a timeout kills the process."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = harness_argv(harness, case_dir, out_dir, reps, flush_bytes)
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        return HarnessRun(
            case_id=Path(case_dir).name,
            out_dir=out_dir,
            returncode=-signal.SIGKILL,
            status="timeout",
            stdout=_text(exc.stdout),
            stderr=_text(exc.stderr),
            seconds=time.monotonic() - start,
        )
    return HarnessRun(
        case_id=Path(case_dir).name,
        out_dir=out_dir,
        returncode=done.returncode,
        status=exit_status(done.returncode, definition),
        stdout=done.stdout,
        stderr=done.stderr,
        seconds=time.monotonic() - start,
    )


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def run_pack(
    harness: Path,
    pack: InputPack,
    out_root: Path,
    case_ids: Sequence[str] | None = None,
    reps: int = 1,
    timeout: float = 60.0,
    definition: OperatorDefinition | None = None,
) -> tuple[HarnessRun, ...]:
    """Run every case (or `case_ids`) into `out_root/<case_id>/`, one after another."""
    ids = tuple(case_ids) if case_ids is not None else pack.case_ids
    return tuple(
        run_harness(
            harness,
            pack.case_dir(i),
            Path(out_root) / i,
            reps=reps,
            timeout=timeout,
            definition=definition,
        )
        for i in ids
    )
