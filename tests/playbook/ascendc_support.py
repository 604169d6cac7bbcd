"""The Ascend C playbook's steps as projects, run through the real `ascendc-cpu` toolchain
(no tests here; used by test_playbook_ascendc.py and measure_ascendc.py).

A step's project is the Ascend C template with the step's files laid over it, exactly what the
offline model writes into a team workspace. Every job is a full one: the 15 local cases and the
3 perf cases; the toolchain and its cache folder are the ladder tests' (one per process).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from justkernel.agents.playbook import Playbook, load_playbook
from justkernel.operators import load_operator, local_cases
from tests.toolchains.ascendc_cpu.ladder_support import (
    PERF_CASES,
    Ran,
    assemble,
    run,
    toolchain,
)
from tests.workers.test_evaluator_shared import fresh_dir

LOCAL_CASES = tuple(c.id for c in local_cases(load_operator().ascendc_target()))
BASELINE = "baseline"


def playbook() -> Playbook:
    return load_playbook("confusion_mul_grad", "ascendc")


def step_project(name: str, files: dict[str, str]) -> Path:
    """The template with `files` (paths relative to the project) written over it."""
    tc = toolchain()
    dest = assemble(tc, fresh_dir(f"pb-{name}") / "project")
    for rel, content in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return dest


def projects(pb: Playbook, names: tuple[str, ...] = ()) -> dict[str, Path]:
    """The baseline and every step (or only `names`) as projects."""
    wanted = names or (BASELINE, *pb.steps)
    out = {}
    for name in wanted:
        files = pb.baseline_files if name == BASELINE else pb.steps[name].files
        out[name] = step_project(name, files)
    return out


async def full_jobs(jobs: dict[str, Path], parallel: int = 2) -> dict[str, Ran]:
    """One full job per project (15 local cases + 3 perf cases), `parallel` at a time."""
    tc = toolchain()
    gate = asyncio.Semaphore(parallel)

    async def one(src: Path) -> Ran:
        async with gate:
            return await run(tc, src, LOCAL_CASES, PERF_CASES)

    done = await asyncio.gather(*(one(src) for src in jobs.values()))
    return dict(zip(jobs, done, strict=True))
