"""The ladder and misuse fixtures as projects, and how the tests run them (no tests here).

A project is the Ascend C template with overlays laid over it (tests/fixtures/ascendc/README.md):
the ladder's tiling and kernel, then a per-variant `op_host/ladder_config.h` written from
`Knobs`, or a misuse fixture. One kernel source, many variants: the knobs are the only copy.
Everything runs through the real `ascendc-cpu` toolchain (real g++, real sandbox); the shared
input packs and world-traversable folders come from the evaluator tests' helpers.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from dataclasses import dataclass, fields, replace
from pathlib import Path

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import JobKind, Receipt
from justkernel.operators import InputPack
from justkernel.toolchains import check_tree
from justkernel.toolchains.ascendc_cpu import AscendcCpuToolchain
from justkernel.toolchains.ascendc_cpu.build import HarnessMain
from tests.workers.test_evaluator_shared import fresh_dir, packs, require_tools, shared_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ascendc"
LADDER = FIXTURES / "ladder"
MISUSE = FIXTURES / "misuse"
KERNEL = "op_kernel/confusion_mul_grad.cpp"
CONFIG = "op_host/ladder_config.h"
PERF_CASES = ("p01_row_f32", "p02_col_f32", "p03_full_f32")
# The one local case every ladder job also checks (a row reduction the narrow tiling accepts);
# the misuse probes run it alone.
PROBE_CASE = "c01_row_f32"
SITE_MARK = "@site"


@dataclass(frozen=True)
class Knobs:
    """The compile-time knobs of op_host/ladder_config.h (defaults: the best rung)."""

    scalar: int = 0  # 1: per-element GetValue/SetValue loops
    depth: int = 2  # queue depth (1 single, 2 double buffering)
    tile: int = 0  # elements per tile, 0 = sized to the UB
    cores: int = 0  # 1: SetBlockDim(1), 0: every vector core
    fused: int = 1  # 0: output0 pass then output1 pass
    race: int = 0  # 1: inputs in a TBuf with no EnQue/DeQue (misuse only)

    def header(self) -> str:
        lines = [f"#define LADDER_{f.name.upper()} {getattr(self, f.name)}" for f in fields(self)]
        guard = ["#ifndef LADDER_CONFIG_H", "#define LADDER_CONFIG_H"]
        return "\n".join(["// Written by the ladder tests.", *guard, *lines, "#endif", ""])


BEST = Knobs()
# Each worse rung changes one knob of the best rung (tests/fixtures/ascendc/README.md).
WORSE: dict[str, Knobs] = {
    "scalar_loops": replace(BEST, scalar=1),
    "single_buffer": replace(BEST, depth=1),
    "small_tiles": replace(BEST, tile=256),
    "one_core": replace(BEST, cores=1),
    "separate_passes": replace(BEST, fused=0),
}
VARIANTS: dict[str, Knobs] = {"best": BEST, **WORSE}


def template_dir(tc: AscendcCpuToolchain) -> Path:
    return tc.definition.project_dir


def assemble(
    tc: AscendcCpuToolchain, dest: Path, *overlays: Path, knobs: Knobs | None = None
) -> Path:
    """Template, then each overlay folder in order, then (if given) the knobs header."""
    shutil.copytree(template_dir(tc), dest, ignore=shutil.ignore_patterns("build"))
    for overlay in overlays:
        shutil.copytree(overlay, dest, dirs_exist_ok=True)
    if knobs is not None:
        (dest / CONFIG).write_text(knobs.header())
    return dest


def ladder_project(tc: AscendcCpuToolchain, name: str, where: str = "") -> Path:
    root = fresh_dir(f"ladder-{name}")
    return assemble(tc, root / where / "project", LADDER, knobs=VARIANTS[name])


def misuse_project(tc: AscendcCpuToolchain, check: str) -> Path:
    return assemble(tc, fresh_dir(f"misuse-{check}") / "project", LADDER, MISUSE / check)


def marked_site(project: Path) -> tuple[str, int]:
    """(file relative to the project, line) of the one `// @site` marker in its editable files."""
    hits = []
    for path in sorted(project.glob("op_*/**/*")):
        if path.is_file() and path.suffix in {".cpp", ".h"}:
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(rf"//\s*{SITE_MARK}\b", line):
                    hits.append((path.relative_to(project).as_posix(), n))
    assert len(hits) == 1, f"expected one {SITE_MARK} marker in {project}, found {hits}"
    return hits[0]


_toolchain: list[AscendcCpuToolchain] = []


def cache_dir() -> Path:
    return shared_settings().resolved_data_dir / "toolchains" / "ascendc-cpu"


def harness_main(tc: AscendcCpuToolchain) -> HarnessMain:
    """The toolchain's cached harness main object (the same folder the toolchain uses)."""
    return HarnessMain(cache_dir() / tc.version)


def toolchain() -> AscendcCpuToolchain:
    """One toolchain per process; its harness main is cached in the shared data folder."""
    require_tools()
    if not _toolchain:
        _toolchain.append(AscendcCpuToolchain(cache_dir=cache_dir()))
    tc = _toolchain[0]
    missing = tc.missing()
    assert not missing, missing
    return tc


def spec(
    tc: AscendcCpuToolchain,
    src: Path,
    pack_set: dict[str, InputPack],
    case_ids: tuple[str, ...],
    perf_case_ids: tuple[str, ...] = (),
) -> JobSpec:
    return JobSpec(
        operator=tc.definition.name,
        kind=JobKind.FULL if perf_case_ids else JobKind.PROBE,
        case_ids=case_ids,
        perf_case_ids=perf_case_ids,
        source_tree_hash=check_tree(src, tc.definition).tree_hash,
        input_packs={role: p.pack_hash for role, p in pack_set.items()},
        toolchain_id=tc.id,
        toolchain_version=tc.version,
    )


@dataclass(frozen=True)
class Ran:
    """A receipt and the job's work folder (its logs/ holds the blobs the receipt names)."""

    receipt: Receipt
    workdir: Path

    def blob(self, sha256: str) -> bytes:
        return (self.workdir / "logs" / sha256).read_bytes()

    def cycles(self) -> dict[str, int]:
        return {c.case_id: c.est_cycles for c in self.receipt.cycles if c.est_cycles is not None}


async def run(
    tc: AscendcCpuToolchain,
    src: Path,
    case_ids: tuple[str, ...] = (PROBE_CASE,),
    perf_case_ids: tuple[str, ...] = (),
) -> Ran:
    """One job straight through the toolchain (no result cache: every call really runs)."""
    pack_set = await packs(JobKind.FULL if perf_case_ids else JobKind.PROBE)
    job = spec(tc, src, pack_set, case_ids, perf_case_ids)
    work = fresh_dir("work") / "w"
    receipt = await tc.run(job, src, pack_set, work, slot=0, parallelism=2)
    return Ran(receipt, work)


async def run_all(
    tc: AscendcCpuToolchain, jobs: dict[str, Path], perf_case_ids: tuple[str, ...] = ()
) -> dict[str, Ran]:
    """Several jobs at once, two at a time (the test machine has two cores)."""
    gate = asyncio.Semaphore(2)

    async def one(src: Path) -> Ran:
        async with gate:
            return await run(tc, src, perf_case_ids=perf_case_ids)

    done = await asyncio.gather(*(one(src) for src in jobs.values()))
    return dict(zip(jobs, done, strict=True))


_ladder: dict[str, Ran] = {}


async def ladder(*names: str) -> dict[str, Ran]:
    """The named variants' full jobs (all by default): the probe case and the 3 perf cases,
    each variant once per test process."""
    wanted = names or tuple(VARIANTS)
    todo = [n for n in wanted if n not in _ladder]
    if todo:
        tc = toolchain()
        _ladder.update(await run_all(tc, {n: ladder_project(tc, n) for n in todo}, PERF_CASES))
    return {n: _ladder[n] for n in wanted}
