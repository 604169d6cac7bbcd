"""Local judge throughput: submissions evaluated per minute over HTTP, by the real judge-server.

Run: uv run python bench/judge.py [--toolchain ascendc-cpu|cpu] [--candidates N] [--no-baseline]

Starts `justkernel judge-server` on a fresh judge folder (new secret seed, 15 hidden points) and
submits N distinct candidates, then N identical ones (cache hits), then the target's baseline
once. `cpu` (the C port): the fast fixture kernel with a different comment each, so none is a
cache hit, timed by callgrind; `ascendc-cpu` (the default: the Ascend C project): the template
baseline with a different constant each (a comment would be an object-cache hit), timed by the
per-pipe model; its first submission builds the judge's harness main and precompiled headers.
Prints seconds per submission from upload to finished result (the judge evaluates one at a
time, 2 simulations in parallel) and submissions per minute.
Goal on 2 cores: one submission well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.local_judge_files import read_server_info
from justkernel.evaluation.protocol import CandidateBundle, OfficialResult
from justkernel.operators import load_operator

REPO = Path(__file__).resolve().parent.parent
FAST = REPO / "tests" / "fixtures" / "kernels" / "fast_fused_blocked"


def bundle(
    root: Path, name: str, variant: Path | None, tag: str, toolchain: str
) -> CandidateBundle:
    definition = load_operator()
    view = definition.for_toolchain(toolchain)
    dest = root / "candidates" / name
    shutil.copytree(view.project_dir, dest, ignore=shutil.ignore_patterns("build"))
    if variant is not None:
        shutil.copytree(variant, dest, dirs_exist_ok=True)
    kernel = dest / view.build.kernel_source
    if toolchain == "cpu":
        kernel.write_text(kernel.read_text() + f"\n/* bench {tag} */\n")
    else:
        kernel.write_text(
            kernel.read_text() + f"\nconstexpr long kBench{tag} = {time.time_ns()};\n"
        )
    return CandidateBundle.from_project(dest, definition, toolchain=toolchain, candidate_id=name)


def start(judge_dir: Path, work: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "justkernel.cli.main", "judge-server", "--port", "0"]
    argv += ["--data-dir", str(judge_dir), "--work-dir", str(work)]
    argv += ["--submissions-per-minute", "1000", "--daily-quota", "1000"]
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while read_server_info(judge_dir) is None:  # written once the app has started
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("judge-server did not start")
        time.sleep(0.1)
    return process


async def timed(judge_dir: Path, bundles: list[CandidateBundle]) -> list[tuple[float, object]]:
    """Submit all at once (the judge queues them); seconds from the first upload to each end."""
    async with local_judge_client(judge_dir) as client:
        t0 = time.monotonic()
        ids = [await client.submit(b) for b in bundles]
        done: list[tuple[float, OfficialResult]] = []
        for sid in ids:
            result = await client.wait(sid, max_seconds=900, poll_seconds=0.2)
            done.append((time.monotonic() - t0, result))
        return done


def report(label: str, done: list[tuple[float, OfficialResult]]) -> None:
    total = done[-1][0]
    per = total / len(done)
    passed = sum(1 for _, r in done if r.passed)
    for _, r in done:
        if not r.passed:
            bad = sorted({p.outcome or "?" for p in r.points if not p.passed})
            print(f"  {r.submission_id}: {r.status.value} {r.raw.get('outcome')} {bad}")
    seconds = [r.raw.get("evaluation", {}).get("seconds") for _, r in done]
    evaluated = [s for s in seconds if s is not None]
    inner = f"{statistics.mean(evaluated):5.2f}" if evaluated else "  —  "
    print(
        f"  {label:<26} {len(done):3d} submissions  {per:6.2f} s each "
        f"(evaluation {inner} s)  {60 / per:6.1f}/min  passed {passed}/{len(done)}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--toolchain", choices=("ascendc-cpu", "cpu"), default="ascendc-cpu")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="jk-bench-judge-"))
    os.chmod(root, 0o755)
    work = root / "work"
    work.mkdir(mode=0o711)
    judge_dir = root / "judge"
    process = start(judge_dir, work)
    try:
        tc = args.toolchain
        print(f"judge folder {judge_dir}, {os.cpu_count()} CPUs, toolchain {tc}")
        variant, label = (FAST, "fast kernel") if tc == "cpu" else (None, "Ascend C baseline")
        fast = [bundle(root, f"c{i}", variant, str(i), tc) for i in range(args.candidates)]
        report(f"{label}, distinct", await timed(judge_dir, fast))
        report(f"{label}, cache hits", await timed(judge_dir, fast))
        if not args.no_baseline:
            base = bundle(root, "base", None, "b", tc)
            report("baseline", await timed(judge_dir, [base]))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
