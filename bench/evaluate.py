"""Evaluation throughput: full jobs (15 cases + 3 callgrind runs) on 1 and 2 pool slots.

Run: uv run python bench/evaluate.py [--candidates N] [--slots 1,2] [--no-baseline]
     uv run python bench/evaluate.py --toolchain ascendc-cpu [--candidates N] [--slots 1,2]

Candidates are the fast fixture kernel with a different harmless comment each, so every one
is a distinct source (no cache hit) with the same code. Prints per-stage seconds, seconds per
candidate, candidates per minute, slot busy % while work was queued, and the naive baseline's
figures for comparison. Goal on 2 cores: <= 6 s per candidate, slots >= 90 % busy.

`--toolchain ascendc-cpu` runs the Ascend C template's baseline (15 cases + 3 modelled perf
cases) on the ascendc-cpu toolchain AND the cpu toolchain twice, on its template baseline (the
like-for-like kernel) and on the fast fixture (callgrind's best case), each on every slot
count, in the same run, and prints them side by side. Goal on 2 cores: <= 2 s per candidate
and >= 3x the cpu toolchain's candidates per minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from justkernel.core.receipts import Receipt, Status
from justkernel.operators import load_operator
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import CpuToolchain
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.pool import LocalPool

REPO = Path(__file__).resolve().parent.parent
FAST = REPO / "tests" / "fixtures" / "kernels" / "fast_fused_blocked"
STAGES = ("static_check", "compile", "functional", "simulate", "total")


def open_tree(root: Path) -> None:
    """World-readable, so the sandbox uid can read the candidates."""
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)


def make_candidate(root: Path, name: str, variant: Path | None, tag: str) -> Path:
    dest = root / "candidates" / name
    shutil.copytree(load_operator().project_dir, dest, ignore=shutil.ignore_patterns("build"))
    if variant is not None:
        shutil.copytree(variant, dest, dirs_exist_ok=True)
    kernel = dest / "op_kernel" / "cmg_kernel.c"
    kernel.write_text(kernel.read_text() + f"\n/* bench candidate {tag} */\n")
    open_tree(root)
    return dest


def stage_line(label: str, receipts: list[Receipt]) -> str:
    parts = []
    for stage in STAGES:
        values = [getattr(r.durations, stage) for r in receipts]
        known = [v for v in values if v is not None]
        parts.append(f"{stage} {statistics.mean(known):5.2f}" if known else f"{stage}   —  ")
    return f"  {label:<22} " + "  ".join(parts)


async def run_batch(
    settings: Settings,
    toolchain: CpuToolchain,
    slots: int,
    sources: list[Path],
    parallelism: int = 1,
) -> tuple[list[Receipt], float, float | None]:
    pool = LocalPool(slots=slots)
    blobs = BlobStore(settings.blobs_dir)
    ev = Evaluator(settings, pool, toolchain, blobs, sim_parallelism=parallelism)
    try:
        t = time.perf_counter()
        receipts = await asyncio.gather(
            *(ev.evaluate(s, team=f"t{i % 4}") for i, s in enumerate(sources))
        )
        wall = time.perf_counter() - t
    finally:
        await pool.close()
    return list(receipts), wall, pool.stats.utilization(slots)


async def main(candidates: int, slot_counts: list[int], baseline: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="jk-bench-evaluate-"))
    os.chmod(root, 0o755)
    try:
        settings = Settings(data_dir=root / "data", config_dir=root / "config")
        toolchain = CpuToolchain(cache_dir=root / "data" / "toolchains" / "cpu")
        print(f"host: {os.cpu_count()} cores · {toolchain.executor(None).cpu_model}")
        print(f"toolchain: cpu {toolchain.version} · {toolchain.version_info()['gcc']}")
        t = time.perf_counter()
        warm = Evaluator(settings, LocalPool(1), toolchain, BlobStore(settings.blobs_dir))
        await warm.packs("full")  # type: ignore[arg-type]
        print(f"input packs built once (15 local + 3 perf cases): {time.perf_counter() - t:.1f} s")

        print("\nfull jobs: 15 functional cases + 3 callgrind perf cases per candidate")
        tag = 0
        for slots in slot_counts:
            sources = []
            for _ in range(candidates):
                tag += 1
                sources.append(make_candidate(root, f"fast-{tag}", FAST, str(tag)))
            receipts, wall, busy = await run_batch(settings, toolchain, slots, sources)
            bad = [r for r in receipts if r.status is not Status.MEASURED]
            cycles = {r.total_est_cycles for r in receipts}
            print(
                f"fast kernel, {slots} slot{'s' if slots > 1 else ''}: {candidates} candidates in "
                f"{wall:.1f} s = {wall / candidates:.2f} s per candidate, "
                f"{60 * candidates / wall:.1f} candidates/min, slots busy "
                + (f"{100 * busy:.0f} %" if busy is not None else "—")
                + f" while work was queued{'; NOT MEASURED: ' + str(len(bad)) if bad else ''}"
            )
            print(stage_line("mean stage seconds", receipts))
            print(f"  est. cycles (sum of 3): {sorted(cycles)} (same code, so one value expected)")

        if baseline:
            tag += 1
            src = make_candidate(root, "baseline", None, f"baseline {tag}")
            receipts, wall, _ = await run_batch(settings, toolchain, 1, [src])
            r = receipts[0]
            print(
                f"\nnaive baseline (template), 1 slot: {wall:.1f} s per candidate, "
                f"{60 / wall:.1f} candidates/min, status {r.status.value}"
            )
            print(stage_line("stage seconds", receipts))
            per_case = ", ".join(f"{c.case_id} {c.est_cycles:,}" for c in r.cycles if c.est_cycles)
            print(f"  est. cycles: {per_case}; sum {r.total_est_cycles:,}")

        t = time.perf_counter()
        hit_ev = Evaluator(settings, LocalPool(1), toolchain, BlobStore(settings.blobs_dir))
        hit = await hit_ev.evaluate(root / "candidates" / "fast-1")
        print(
            f"\ncache hit (identical job again): {1000 * (time.perf_counter() - t):.0f} ms, "
            f"cache_hit={hit.cache_hit}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def make_ascendc_candidate(root: Path, name: str, tag: str) -> Path:
    """The Ascend C template (the baseline kernel) with a harmless comment of its own."""
    definition = load_operator().ascendc_target()
    dest = root / "candidates" / name
    shutil.copytree(
        definition.project_dir, dest, ignore=shutil.ignore_patterns("build", "build_out")
    )
    kernel = dest / definition.build.kernel_source
    kernel.write_text(kernel.read_text() + f"\n// bench candidate {tag}\n")
    open_tree(root)
    return dest


async def side_by_side(candidates: int, slot_counts: list[int]) -> None:
    """ascendc-cpu (template baseline, cycle model) against cpu twice: its own template
    baseline (the like-for-like kernel) and the fast fixture (callgrind's best case: its cost
    grows with the instructions a kernel executes, the cycle model's with the API calls and
    bytes), each on every slot count, one table at the end."""
    from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain

    root = Path(tempfile.mkdtemp(prefix="jk-bench-evaluate-"))
    os.chmod(root, 0o755)
    try:
        settings = Settings(data_dir=root / "data", config_dir=root / "config")
        data = root / "data" / "toolchains"
        toolchains = {
            "cpu": CpuToolchain(cache_dir=data / "cpu"),
            "ascendc-cpu": AscendcCpuToolchain(cache_dir=data / "ascendc-cpu"),
        }
        cpu = toolchains["cpu"]
        print(f"host: {os.cpu_count()} cores · {cpu.executor(None).cpu_model}")
        for name, tc in toolchains.items():
            print(f"toolchain: {name} {tc.version} · {tc.version_info()['gcc']}")
        t = time.perf_counter()
        warm = Evaluator(settings, LocalPool(1), cpu, BlobStore(settings.blobs_dir))
        await warm.packs("full")  # type: ignore[arg-type]
        print(f"input packs built once (15 local + 3 perf cases): {time.perf_counter() - t:.1f} s")
        # what every job shares is built once per toolchain version, outside the timing
        warmed = await toolchains["ascendc-cpu"].warm()  # type: ignore[attr-defined]
        print(f"ascendc-cpu harness main and precompiled headers built once: {warmed:.1f} s")
        await cpu._harness.path()
        rows = []
        tag = 0
        kinds = ("cpu", "cpu-baseline", "ascendc-cpu")
        for slots in slot_counts:
            for name in kinds:
                tc = toolchains["ascendc-cpu" if name == "ascendc-cpu" else "cpu"]
                sources = []
                for _ in range(candidates):
                    tag += 1
                    if name == "cpu":
                        sources.append(make_candidate(root, f"fast-{tag}", FAST, str(tag)))
                    elif name == "cpu-baseline":
                        sources.append(make_candidate(root, f"base-{tag}", None, str(tag)))
                    else:
                        sources.append(make_ascendc_candidate(root, f"ascendc-{tag}", str(tag)))
                share = max(1, (os.cpu_count() or 1) // slots)  # cores per slot for its cases
                receipts, wall, busy = await run_batch(settings, tc, slots, sources, share)  # type: ignore[arg-type]
                bad = [r for r in receipts if r.status is not Status.MEASURED]
                rows.append((name, slots, wall, busy, receipts, bad))
                print(f"  done: {name}, {slots} slot(s), {wall:.1f} s", flush=True)
        label = {
            "cpu": "cpu (fast fixture)",
            "cpu-baseline": "cpu (baseline)",
            "ascendc-cpu": "ascendc-cpu (baseline)",
        }
        print(
            f"\nfull jobs, {candidates} distinct candidates per row (no cache hits); each job "
            "runs its cases (cores / slots) at a time"
        )
        print(
            f"  {'toolchain':<24} {'slots':>5} {'s/cand':>7} {'cand/min':>9} {'busy':>5}  "
            + "  ".join(f"{s:>12}" for s in STAGES)
        )
        per_minute: dict[tuple[str, int], float] = {}
        for name, slots, wall, busy, receipts, bad in rows:
            per_minute[(name, slots)] = 60 * candidates / wall
            stages = []
            for stage in STAGES:
                known = [v for r in receipts if (v := getattr(r.durations, stage)) is not None]
                stages.append(f"{statistics.mean(known):12.2f}" if known else f"{'—':>12}")
            flag = f"  NOT MEASURED: {len(bad)} ({bad[0].detail[:80]})" if bad else ""
            print(
                f"  {label[name]:<24} {slots:>5} {wall / candidates:7.2f} "
                f"{60 * candidates / wall:9.1f} "
                + (f"{100 * busy:4.0f}%" if busy is not None else f"{'—':>5}")
                + "  "
                + "  ".join(stages)
                + flag
            )
        for slots in slot_counts:
            mine = per_minute[("ascendc-cpu", slots)]
            like = mine / per_minute[("cpu-baseline", slots)]
            best = mine / per_minute[("cpu", slots)]
            print(
                f"  {slots} slot(s): ascendc-cpu runs {like:.2f}x the cpu toolchain's "
                f"candidates/min on the baseline, {best:.2f}x on the fast fixture"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=6)
    parser.add_argument("--slots", default="1,2", help="comma-separated slot counts")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--toolchain",
        choices=("cpu", "ascendc-cpu"),
        default="cpu",
        help="ascendc-cpu: that toolchain side by side with cpu, on every slot count",
    )
    args = parser.parse_args()
    slot_counts = [int(s) for s in args.slots.split(",")]
    if args.toolchain == "ascendc-cpu":
        asyncio.run(side_by_side(args.candidates, slot_counts))
    else:
        asyncio.run(main(args.candidates, slot_counts, not args.no_baseline))
