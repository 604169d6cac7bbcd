"""Team harness at scale: 100 offline teams in one process.

Phase 1 (zero model latency): lab-side CPU milliseconds per agent step (harness, tools, event
log, cache lookups; the sandboxed evaluations run in child processes and are not counted) and
the peak RSS of the lab process. The receipt cache is warmed first by a few teams, so phase 1
measures the harness, not the simulator.
Phase 2 (2 s simulated model latency): whether 100 teams keep the model-call limit saturated.

Every team of a run with the same shape shares one compiled agent graph (`agents.binding`);
the figures say how many graphs the run compiled. Peak RSS is given for the warm-up and, apart,
for phase 1 (Linux: the high-water mark is reset in between through /proc/self/clear_refs), and
for the whole process.

Run: uv run python bench/teams.py [--teams 100] [--latency 2] [--seconds 60] [--phase1-seconds 1800]
[--keep FOLDER] (a kept folder's warm receipt cache makes the next run's warm-up short)
[--profile FILE] (py-spy, when it is on PATH, samples phase 1 alone into FILE: collapsed stacks
of the thread holding the GIL)
Goals (issue #15): <= 20 ms CPU per step, <= 600 MB peak RSS, model-call slots busy all the time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from justkernel.app import open_runtime
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.settings.config import Settings


def _high_water_mb() -> float:
    """The process's peak RSS since start or since the last `_reset_high_water` (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_high_water() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # proc(5): resets VmHWM to the current RSS


def _start_profiler(out: Path | None) -> subprocess.Popen[bytes] | None:
    """py-spy sampling this process (the thread holding the GIL) until stopped."""
    if out is None:
        return None
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("--profile needs py-spy on PATH")
    cmd = [spy, "record", "--gil", "-r", "200", "--format", "raw", "-o", str(out)]
    proc = subprocess.Popen([*cmd, "--pid", str(os.getpid())])
    time.sleep(1.0)  # let it attach before phase 1 starts
    return proc


def _stop_profiler(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None:
        proc.send_signal(2)  # SIGINT: py-spy writes its file and exits
        proc.wait(timeout=60)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _count_responses(runtime, run_id: str) -> int:  # type: ignore[no-untyped-def]
    return len([1 async for e in runtime.lab.events.iter_all(run_id) if e.kind == "model.response"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warm-teams", type=int, default=12)
    parser.add_argument(
        "--phase1-seconds",
        type=float,
        default=1800.0,
        help="stop phase 1 after this long (the figures are per step done)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="use (and keep) this folder for the lab's data: a second run reuses its warm cache",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="sample phase 1 with py-spy (on PATH) into this file (collapsed stacks)",
    )
    args = parser.parse_args()
    if args.keep is not None:
        folder = args.keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="jk-bench-teams-", dir="/tmp"))
    folder.chmod(0o755)  # the sandbox user must reach the data folder
    try:
        asyncio.run(bench(args, Settings(data_dir=folder / "data", config_dir=folder / "cfg")))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


async def bench(args: argparse.Namespace, settings: Settings) -> None:
    async with open_runtime(settings) as runtime:
        print(f"warming the receipt cache with {args.warm_teams} teams (real simulations)…")
        started = time.monotonic()
        warm = await runtime.lab.runs.create("warm-up")
        scheduler = runtime.scheduler(warm.id, SchedulerConfig())
        for _ in range(args.warm_teams):
            await scheduler.add_team("offline")
        await scheduler.run(seconds=1800)
        print(f"  done in {time.monotonic() - started:.0f} s, peak RSS {_high_water_mb():.0f} MB")
        _reset_high_water()

        print(f"phase 1: {args.teams} offline teams, zero model latency")
        run = await runtime.lab.runs.create("bench: zero latency")
        scheduler = runtime.scheduler(run.id, SchedulerConfig())
        for _ in range(args.teams):
            await scheduler.add_team("offline")
        profiler = _start_profiler(args.profile)
        cpu0, wall0 = _cpu_seconds(), time.monotonic()
        reason = await scheduler.run(seconds=args.phase1_seconds)
        cpu, wall = _cpu_seconds() - cpu0, time.monotonic() - wall0
        _stop_profiler(profiler)
        steps = await _count_responses(runtime, run.id)
        phase_mb = _high_water_mb()
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        per_step, graphs = 1000 * cpu / max(steps, 1), len(scheduler.graphs)
        print(f"  {reason}; {steps} agent steps in {wall:.1f} s wall")
        print(f"  compiled agent graphs: {graphs} for {args.teams} teams")
        print(f"  lab CPU per agent step: {per_step:.1f} ms (goal <= 20)")
        print(f"  peak RSS in phase 1: {phase_mb:.0f} MB (goal <= 600)")
        print(f"  peak RSS of the lab process, warm-up included: {peak_mb:.0f} MB")

        print(f"phase 2: {args.teams} teams, {args.latency:g} s model latency, 4 model calls")
        run = await runtime.lab.runs.create("bench: slow model")
        config = SchedulerConfig(model_calls=4, offline_latency_seconds=args.latency)
        scheduler = runtime.scheduler(run.id, config)
        for _ in range(args.teams):
            await scheduler.add_team("offline")
        limiter = scheduler.governance.limiter
        samples: list[int] = []

        async def sample() -> None:
            while True:
                samples.append(limiter.in_flight)
                await asyncio.sleep(0.1)

        sampler = asyncio.create_task(sample())
        await scheduler.run(seconds=args.seconds)
        sampler.cancel()
        settled = samples[int(len(samples) * 0.1) :]  # skip the ramp-up
        busy = sum(settled) / (len(settled) * limiter.total) if settled else 0.0
        full = sum(1 for s in settled if s == limiter.total) / max(len(settled), 1)
        steps = await _count_responses(runtime, run.id)
        ideal = args.seconds * limiter.total / args.latency
        print(
            f"  model-call slots busy: {100 * busy:.1f}% on average, all 4 busy "
            f"{100 * full:.1f}% of the time"
        )
        print(f"  model responses: {steps} in {args.seconds:g} s (ideal {ideal:.0f})")
        print(  # the line a closing note quotes
            f"summary: {args.teams} teams, {graphs} compiled graph(s), "
            f"{per_step:.1f} ms lab CPU per step, {phase_mb:.0f} MB peak RSS in phase 1 "
            f"({peak_mb:.0f} MB with the warm-up), "
            f"slots busy {100 * busy:.1f}% at {args.latency:g} s latency"
        )


if __name__ == "__main__":
    main()
