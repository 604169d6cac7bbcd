"""Running one CANN command: its own process group, a wall-clock limit, output kept in files.

Output goes to files, not pipes, so a chatty build cannot fill memory and a command killed on
timeout still leaves what it printed. The whole process group is killed at the end (on timeout
and after a normal exit), so nothing a build or msprof started outlives its step.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TAIL_LINES = 30
MAX_READ_BYTES = 1 << 20  # what a log keeps of each stream (head and tail)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None  # None: killed on timeout
    seconds: float
    timed_out: bool
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def signal_name(self) -> str | None:
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def outcome(self) -> str:
        """One phrase: how the command ended."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        if self.signal_name:
            return f"killed by {self.signal_name}"
        return f"exit {self.returncode}"

    def tail(self, lines: int = TAIL_LINES) -> list[str]:
        """The last lines a person needs to see why it failed (stderr, else stdout)."""
        text = self.stderr.strip() or self.stdout.strip()
        return text.splitlines()[-lines:]

    def log(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\n[{self.outcome()}, {self.seconds:.1f} s]\n"
            f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}\n"
        )


def _read(path: Path) -> str:
    size = path.stat().st_size
    with path.open("rb") as f:
        if size <= MAX_READ_BYTES:
            return f.read().decode("utf-8", "replace")
        head = f.read(MAX_READ_BYTES // 2)
        f.seek(size - MAX_READ_BYTES // 2)
        tail = f.read()
    return (head + b"\n[... truncated ...]\n" + tail).decode("utf-8", "replace")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    wall_seconds: float,
    output_dir: Path,
    name: str,
) -> CommandResult:
    """Run argv; stdout/stderr go to `output_dir/<name>.stdout|.stderr`."""
    os.makedirs(output_dir, exist_ok=True)
    out_path, err_path = output_dir / f"{name}.stdout", output_dir / f"{name}.stderr"
    start = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), wall_seconds)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            await proc.wait()
        finally:
            _kill_group(proc.pid)
    return CommandResult(
        argv=tuple(argv),
        returncode=None if timed_out else proc.returncode,
        seconds=time.monotonic() - start,
        timed_out=timed_out,
        stdout=_read(out_path),
        stderr=_read(err_path),
    )
