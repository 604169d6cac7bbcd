"""Batch mode (`toolchains/ascendc_cpu/batch.py`, `harness --batch`): one sandbox per harness,
one fork per case, and the re-run rule that keeps receipts what single runs make them.

- the harness in batch mode leaves each case what a single run leaves (files, streams, exit
  code) and reports once, last, on its own stdout; a case past its wall limit ends the batch;
- a hostile child (a kernel that got past every check) that rewrites another case's outputs,
  writes a fake status file and a fake report cannot make the parent report it: the tampered
  case is marked, the report is the parent's, /proc/<parent>/fd is closed to it, and no static
  destructor runs in the parent after the report;
- through the real toolchain: the baseline's receipt from batches equals the one from single
  runs (statuses, outputs, cycles, traces), and a kernel whose tiling rejects some cases gets
  the same case results, those cases re-run alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from justkernel.core.receipts import CaseOutcome, Receipt, Status
from justkernel.toolchains.ascendc_cpu.batch import (
    Done,
    batch_argv,
    judged_alone,
    read_report,
)
from justkernel.toolchains.ascendc_cpu.run import CaseRunner
from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked
from tests.toolchains.ascendc_cpu.harness_support import (
    SOURCES,
    make_case,
    probe_build,
    run_harness,
)
from tests.toolchains.ascendc_cpu.ladder_support import PERF_CASES, run, toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import baseline_receipt, copy_template
from tests.workers.test_evaluator_shared import fresh_dir, packs

pytestmark = pytest.mark.timeout(300)
SHAPES = ((16, 64), (16, 64), (16, 64))
FILES = ("output0.bin", "output1.bin", "run.json", "trace.json")
TILING = "op_host/confusion_mul_grad.cpp"
PROBLEM = "TilingFunc(gert::TilingContext *context)\n{\n    Problem p;\n"
# 2-D and 3-D cases of both dtypes: two batches each with passing and rejected cases
MIXED = (
    "c01_row_f32",
    "c06_full_keep_f32",
    "c09_in1_scalar_full_f32",
    "c11_row_f16",
    "c14_bcast3d_f16",
    "c15_small_bcast_f32",
)
REJECT_3D = (
    "    if (context->GetInputShape(0)->GetStorageShape().GetDimNum() == 3) {\n"
    "        return ge::GRAPH_FAILED;\n"
    "    }\n"
)


@cache
def hostile_harness() -> Path:
    """The probe's harness main and host with hostile_kernel.cpp as the kernel."""
    root = probe_build().root
    obj, exe = root / "hostile.o", root / "harness_hostile"
    kernel = SOURCES / "hostile_kernel.cpp"
    subprocess.run(["g++", "-std=c++17", "-O0", "-c", str(kernel), "-o", str(obj)], check=True)
    subprocess.run(["g++", "main.o", "host.o", str(obj), "-o", str(exe)], cwd=root, check=True)
    return exe


def cases(root: Path, names: tuple[str, ...]) -> list[str]:
    """Probe case folders root/in/<name>, empty root/out/<name>; the batch's pairs."""
    for name in names:
        make_case(root / "in" / name, SHAPES if name != "b" else ((32, 64),) * 3)
        (root / "out" / name).mkdir(parents=True)
    return [f"{root}/in/{n}:{root}/out/{n}" for n in names]


def native_batch(harness: Path, pairs: list[str], *flags: str) -> subprocess.CompletedProcess[str]:
    argv = [str(harness), "--batch", *flags, *pairs]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def states(report: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["state"], e["code"], e["intact"]) for e in report]


def test_a_batch_leaves_each_case_what_a_single_run_leaves(tmp_path: Path) -> None:
    harness = probe_build().harness()
    pairs = cases(tmp_path, ("a", "b", "c"))
    (tmp_path / "in" / "c" / "input1.bin").unlink()  # exit 3: bad case files
    done = native_batch(harness, pairs, "--trace", "--case-wall", "30", "--case-cpu", "15")
    assert done.returncode == 0, done.stderr
    report = read_report(done.stdout, 3)
    assert report is not None and done.stdout.strip().splitlines() == [done.stdout.strip()]
    assert states(report) == [("exit", 0, True), ("exit", 0, True), ("exit", 3, False)]
    assert [e["out"] for e in report] == [p.split(":")[1] for p in pairs]
    assert [judged_alone(e) for e in report] == [False, False, True]
    for name in ("a", "b", "c"):
        single = run_harness(harness, tmp_path / "in" / name, tmp_path / "single" / name, "--trace")
        out = tmp_path / "out" / name
        assert single.returncode == (3 if name == "c" else 0)
        assert (out / "harness.stdout").read_text() == single.stdout
        assert (out / "harness.stderr").read_text() == single.stderr
        for f in FILES:
            here, there = out / f, tmp_path / "single" / name / f
            assert here.is_file() == there.is_file() == (name != "c"), f
            assert name == "c" or here.read_bytes() == there.read_bytes(), f


def test_a_case_past_its_wall_limit_is_killed_and_ends_the_batch(tmp_path: Path) -> None:
    pairs = cases(tmp_path, ("a", "b", "c"))
    argv = [str(hostile_harness()), "--batch", "--case-wall", "0.5", "--case-cpu", "15", *pairs]
    env = {"JK_HOSTILE": "spin", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    report = read_report(done.stdout, 3)
    assert report is not None, done.stderr
    not_run = ("not_run", None, False)
    assert states(report) == [("timeout", None, False), not_run, not_run]
    assert all(judged_alone(e) for e in report)


async def test_a_hostile_child_cannot_make_the_parent_report_for_it() -> None:
    root = fresh_dir("batch-hostile")
    names = ("a", "b", "c")
    cases(root, names)
    binds = {"bin/harness": hostile_harness()}
    binds.update({f"in/{n}": root / "in" / n for n in names})
    limits = SandboxLimits(wall_seconds=60, cpu_seconds=30)
    r = await run_checked(
        batch_argv(list(names), False, SandboxLimits(wall_seconds=30, cpu_seconds=15)),
        ro_binds=binds,
        rw_dir=root / "out",
        limits=limits,
    )
    assert r.status is SandboxStatus.OK, r.stderr.text
    report = read_report(r.stdout.text, 3)
    # the parent's line only: no fake from b's child, nor from a static destructor in the parent
    assert report is not None and r.stdout.text.count("jk-batch") == 1
    assert all("fake" not in e for e in report) and "fake" not in r.stdout.text
    # b's child rewrote a's output0.bin: a is marked and re-run alone; b and c are intact
    assert states(report) == [("exit", 0, False), ("exit", 0, True), ("exit", 0, True)]
    assert [judged_alone(e) for e in report] == [True, False, False]
    b = root / "out" / "b"
    assert '"fake": true' in (b / "harness.stdout").read_text()  # its own file, never read
    assert "Permission denied" in (b / "harness.stderr").read_text()  # the parent's fd
    assert (root / "out" / "a" / "status.json").is_file()  # written, and never read


# -- through the real toolchain ----------------------------------------------------------------


@pytest.fixture
def singles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The cases run alone (CaseRunner._run), in call order."""
    seen: list[str] = []
    original = CaseRunner._run

    async def spy(self: CaseRunner, case_id: str, trace: bool) -> Any:
        seen.append(case_id)
        return await original(self, case_id, trace)

    monkeypatch.setattr(CaseRunner, "_run", spy)
    yield seen


def without_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    async def none(self: CaseRunner, *_: object) -> dict[str, Done]:
        return {}

    monkeypatch.setattr(CaseRunner, "batch", none)


def case_fields(r: Receipt) -> list[tuple[Any, ...]]:
    return [
        (c.case_id, c.outcome, c.passed, c.detail, c.outputs, c.misuse, [g.name for g in c.logs])
        for c in r.cases
    ]


def cycle_fields(r: Receipt) -> list[tuple[Any, ...]]:
    return [
        (c.case_id, c.est_cycles, c.pipeline, [(g.name, g.sha256) for g in c.logs], c.check.outputs)
        for c in r.cycles
    ]


async def local_ids() -> tuple[str, ...]:
    return tuple(e.case.id for e in (await packs())["local"].entries)


async def test_the_baseline_from_batches_is_the_baseline_from_single_runs(
    singles: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tc, ids = toolchain(), await local_ids()
    batched = await baseline_receipt()  # the shared full job, in batches
    without_batches(monkeypatch)
    alone = (await run(tc, copy_template("batch-off"), ids, PERF_CASES)).receipt
    assert len(singles) == len(ids) + len(PERF_CASES)
    assert batched.status is alone.status is Status.MEASURED
    assert (batched.detail, batched.total_est_cycles) == (alone.detail, alone.total_est_cycles)
    assert case_fields(batched) == case_fields(alone)
    assert cycle_fields(batched) == cycle_fields(alone)
    assert [c.est_cycles for c in batched.cycles] == [3_993_380, 4_866_371, 3_533_265]


async def test_cases_that_fail_in_a_batch_are_run_alone_with_the_same_results(
    singles: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tiling that rejects 3-D inputs (harness exit 5), on a probe of both dtypes' cases."""
    tc, ids = toolchain(), MIXED
    entries = {e.case.id: e.case for e in (await packs())["local"].entries}
    rejected = [c for c in ids if len(entries[c].input0) == 3]
    projects = []
    for prefix in ("reject-on", "reject-off"):
        project = copy_template(prefix)
        host = project / TILING
        text = host.read_text()
        assert text.count(PROBLEM) == 1
        host.write_text(text.replace(PROBLEM, PROBLEM + REJECT_3D))
        projects.append(project)
    batched = (await run(tc, projects[0], ids)).receipt
    assert sorted(singles) == sorted(rejected) and 0 < len(rejected) < len(ids)  # alone: those
    without_batches(monkeypatch)
    alone = (await run(tc, projects[1], ids)).receipt
    assert case_fields(batched) == case_fields(alone)
    assert (batched.status, batched.detail) == (alone.status, alone.detail)
    failed = [c for c in batched.cases if not c.passed]
    assert [c.case_id for c in failed] == rejected
    assert all(c.outcome is CaseOutcome.INCORRECT for c in failed)
    assert all("tiling rejected the case" in c.detail for c in failed)
