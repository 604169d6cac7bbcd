"""How soon things happen: figures the tests assert only as behaviour, never by the clock.

Run: uv run python bench/latency.py [--repeat 3]

Prints the median of --repeat runs for: a cached input-pack hash (goal < 0.5 s), how long after
its wall limit a sandboxed endless loop is reported (goal < 3 s), how long cancelling a running
fork bomb takes until every process is gone (goal < 5 s), how long after its limit a command with
background children returns (goal < 5 s), and how busy the local pool keeps its slots with short
jobs queued (goal >= 80 %). The cache-hit time of a whole evaluation is in bench/evaluate.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from justkernel.operators import ensure_input_pack, input_pack_hash, load_operator, local_cases
from justkernel.toolchains.cann.exec import run_command
from justkernel.toolchains.sandbox import SandboxLimits, SandboxResult, run_sandboxed
from justkernel.workers.pool import Job, LocalPool, SlotGrant

REPO = Path(__file__).resolve().parent.parent
HOSTILE = REPO / "tests" / "fixtures" / "hostile"


def open_folder(prefix: str) -> Path:
    """A 0755 folder under /tmp: the sandbox uid must reach it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    return folder


def pids_with(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def until(condition: Callable[[], bool]) -> None:
    """Poll: nothing signals us when processes appear or go."""
    while True:
        if condition():
            return
        await asyncio.sleep(0.002)


async def median(repeat: int, measure: Callable[[], Awaitable[float]]) -> float:
    return statistics.median([await measure() for _ in range(repeat)])


async def cached_pack_hash(root: Path) -> float:
    definition = load_operator()
    cases = local_cases(definition)
    ensure_input_pack(cases, root / "packs", definition)
    t = time.perf_counter()
    input_pack_hash(cases, root / "packs", definition)
    return time.perf_counter() - t


class Sandboxed:
    """The hostile fixture programs, compiled once, run through the real sandbox."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir(mode=0o755)
        for name in ("loop", "forkbomb"):
            subprocess.run(["gcc", "-O1", "-o", str(self.bin / name), str(HOSTILE / f"{name}.c")])
        self.root = root

    def start(self, prog: str, mark: str, **limits: float) -> asyncio.Task[SandboxResult]:
        work = Path(tempfile.mkdtemp(dir=self.root))
        work.chmod(0o755)
        (work / "out").mkdir(mode=0o755)
        return asyncio.create_task(
            run_sandboxed(
                [f"/sandbox/bin/{prog}", mark],
                ro_binds={"bin": self.bin},
                rw_dir=work / "out",
                limits=SandboxLimits(**limits),  # type: ignore[arg-type]
            )
        )

    async def timeout_overshoot(self) -> float:
        limit = 0.3
        t = time.perf_counter()
        await self.start("loop", f"jk-bench-{uuid.uuid4().hex}", wall_seconds=limit)
        return time.perf_counter() - t - limit

    async def cancel_fork_bomb(self) -> float:
        mark = f"jk-bench-{uuid.uuid4().hex}"
        task = self.start("forkbomb", mark, wall_seconds=30)
        await until(lambda: len(pids_with(mark)) >= 6)  # the wrappers and a few forks
        t = time.perf_counter()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await until(lambda: not pids_with(mark))
        return time.perf_counter() - t


async def command_timeout_overshoot(root: Path) -> float:
    limit = 0.5
    t = time.perf_counter()
    await run_command(
        ["bash", "-c", "sleep 30 & sleep 30; wait"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin"},
        wall_seconds=limit,
        output_dir=root / "raw",
        name="slow",
    )
    return time.perf_counter() - t - limit


async def pool_utilisation(jobs: int) -> float:
    pool = LocalPool(slots=2)

    async def work(_grant: SlotGrant) -> None:
        await asyncio.sleep(0.05)

    await asyncio.gather(*(pool.submit(Job("t", work)) for _ in range(jobs)))
    await pool.close()
    return pool.stats.utilization(2) or 0.0


async def main(repeat: int) -> None:
    root = open_folder("jk-bench-latency-")
    try:
        print(f"host: {os.cpu_count()} cores; median of {repeat}")
        hit = await median(repeat, lambda: cached_pack_hash(root))
        print(f"cached input-pack hash (15 local cases): {1000 * hit:.1f} ms   goal < 500 ms")
        box = Sandboxed(root)
        over = await median(repeat, box.timeout_overshoot)
        print(f"sandbox wall limit 0.3 s, reported after the limit: +{over:.2f} s   goal < 3 s")
        cancel = await median(repeat, box.cancel_fork_bomb)
        print(f"fork bomb cancelled until every process is gone: {cancel:.2f} s   goal < 5 s")
        cmd = await median(repeat, lambda: command_timeout_overshoot(root))
        print(f"command limit 0.5 s with background children, returned: +{cmd:.2f} s   goal < 5 s")
        for jobs in (6, 40):
            busy = await median(repeat, lambda jobs=jobs: pool_utilisation(jobs))
            print(
                f"local pool, 2 slots, {jobs} jobs of 50 ms: {100 * busy:.0f} % busy   goal >= 80 %"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    asyncio.run(main(parser.parse_args().repeat))
