"""The evaluation service on a real local pool: cache hits, fair sharing, cancellation and
snapshots, with real gcc and bubblewrap (probe jobs: no simulation needed here)."""

from __future__ import annotations

import asyncio
import itertools
import os
import platform
import uuid
from pathlib import Path

import pytest

from justkernel.core.receipts import JobKind, Receipt, Status
from justkernel.operators import input_pack_hash, load_operator, local_cases, verify_input_pack
from justkernel.operators import pack as pack_module
from justkernel.toolchains import CpuLimits, check_tree
from justkernel.toolchains.sandbox import SandboxLimits
from justkernel.workers.evaluator import CaseSelectionError, CaseSets, Evaluator
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    evaluator,
    make_project,
    own_settings,
    require_tools,
    toolchain,
)

pytestmark = pytest.mark.timeout(120)


def unique_variant(variant: str | None = "fast_fused_blocked") -> Path:
    """A fixture kernel with a harmless unique comment: a new source hash, so no cache hit."""
    src = make_project(variant)
    kernel = src / "op_kernel" / "cmg_kernel.c"
    kernel.write_text(kernel.read_text() + f"\n/* variant {uuid.uuid4().hex} */\n")
    return src


async def test_a_repeated_identical_job_is_served_from_the_cache() -> None:
    require_tools()
    ev = evaluator()
    try:
        src = unique_variant()
        cases = ["c01_row_f32", SMALL_CASE]
        first = await ev.evaluate(src, team="a", kind="probe", case_ids=cases)
        assert first.status is Status.PROBE_PASSED and not first.cache_hit
        submitted = ev.submissions
        again = await ev.evaluate(src, team="b", kind="probe", case_ids=cases)
        assert ev.submissions == submitted  # nothing was run (how fast: bench/evaluate.py)
        assert again.cache_hit and again.team == "b"
        assert again.model_dump(exclude={"cache_hit", "team"}) == first.model_dump(
            exclude={"cache_hit", "team"}
        )
        # the key is the content, not the folder: a copy elsewhere is the same job
        copy = make_project("fast_fused_blocked", dest=src.parent.parent / "copy")
        (copy / "op_kernel" / "cmg_kernel.c").write_bytes(
            (src / "op_kernel" / "cmg_kernel.c").read_bytes()
        )
        assert (await ev.evaluate(copy, kind="probe", case_ids=cases)).cache_hit
        # another case selection or an edit is another job
        other = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE])
        assert not other.cache_hit and other.job_key != first.job_key
        assert ev.submissions == submitted + 1
    finally:
        await ev.pool.close()


async def test_teams_asking_for_the_same_job_at_once_share_one_run() -> None:
    """Teams often reach the same source at the same moment: the job runs once and the others
    get its receipt as a cache hit (exactly what they would read a moment later)."""
    require_tools()
    ev = evaluator(slots=2)
    try:
        src = unique_variant()
        cases = ["c01_row_f32", SMALL_CASE]
        submitted = ev.submissions
        receipts = await asyncio.gather(
            *(ev.evaluate(src, team=t, kind="probe", case_ids=cases) for t in "abc")
        )
        assert ev.submissions == submitted + 1
        assert [r.team for r in receipts] == list("abc")
        assert sorted(r.cache_hit for r in receipts) == [False, True, True]
        assert {r.status for r in receipts} == {Status.PROBE_PASSED}
        stored = ev.cache.get(receipts[0].job_key)
        assert stored is not None
        for r in receipts:
            assert r.model_dump(exclude={"cache_hit", "team"}) == stored.model_dump(
                exclude={"cache_hit", "team"}
            )
    finally:
        await ev.pool.close()


async def test_sixteen_submissions_from_four_teams_share_two_slots_fairly() -> None:
    require_tools()
    ev = evaluator(slots=2)
    teams = "abcd"
    sources = {f"{t}{i}": unique_variant() for t, i in itertools.product(teams, range(4))}
    try:
        # each team bursts its four jobs, one team after the other
        receipts: list[Receipt] = await asyncio.gather(
            *(
                ev.evaluate(src, team=name[0], kind="probe", case_ids=[SMALL_CASE])
                for name, src in sources.items()
            )
        )
    finally:
        await ev.pool.close()
    assert [r.status for r in receipts] == [Status.PROBE_PASSED] * 16
    assert ev.submissions == 16 and len({r.job_key for r in receipts}) == 16
    assert {r.executor.slot for r in receipts} == {0, 1}
    order = [r.team for r in sorted(receipts, key=lambda r: r.started_at)]  # type: ignore[arg-type, return-value]
    first = {t: order.index(t) for t in teams}
    last = {t: len(order) - 1 - order[::-1].index(t) for t in teams}
    for x, y in itertools.permutations(teams, 2):
        assert first[x] < last[y], order  # no team waited behind another team's whole burst
    assert max(first.values()) < 6, order  # with 2 slots, every team starts among the first 6


def sandboxed_harness_pids() -> list[int]:
    """Host pids of candidate harnesses running as a sandbox pool uid."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{name}").st_uid
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if 61000 <= uid < 61064 and cmdline.startswith(b"/sandbox/bin/harness\0"):
            found.append(int(name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def test_cancelling_the_caller_cancels_the_job_and_kills_the_sandbox() -> None:
    require_tools()
    patient = CpuLimits(case=SandboxLimits(wall_seconds=120, cpu_seconds=100, processes=3))
    ev = evaluator(slots=1, tc=toolchain(limits=patient))
    running = asyncio.Event()

    def progress(stage: str) -> None:
        if stage.startswith("case "):
            running.set()

    src = make_project(hostile="endless_loop")
    task = asyncio.create_task(
        ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE], progress=progress)
    )
    try:
        await asyncio.wait_for(running.wait(), timeout=30)
        pids: list[int] = []
        for _ in range(50):  # the harness starts a moment after the stage is announced
            pids = sandboxed_harness_pids()
            if pids:
                break
            await asyncio.sleep(0.05)
        assert pids, "the endless kernel never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not [p for p in pids if alive(p)]  # gone when cancel returns
        assert ev.pool.stats.cancelled == 1 and ev.pool.running == 0
        assert not any(ev.jobs_dir.iterdir())  # the job folder is gone too
    finally:
        await ev.pool.close()


async def test_edits_after_the_snapshot_change_nothing() -> None:
    require_tools()
    ev = evaluator(slots=1)
    src = unique_variant(None)
    definition = load_operator()
    expected = check_tree(src, definition).tree_hash
    kernel = src / "op_kernel" / "cmg_kernel.c"

    def progress(stage: str) -> None:
        if stage == "queued":  # the snapshot is taken; the team keeps editing
            kernel.write_text("this does not compile {\n")

    try:
        r = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE], progress=progress)
    finally:
        await ev.pool.close()
    assert r.status is Status.PROBE_PASSED and r.source_sha256 == expected
    assert kernel.read_text() == "this does not compile {\n"


async def test_a_wall_clock_timeout_is_never_cached() -> None:
    require_tools()
    if platform.machine() != "x86_64":
        pytest.skip("raw x86_64 syscalls")
    quick = CpuLimits(case=SandboxLimits(wall_seconds=1.5, cpu_seconds=1, processes=3))
    ev = evaluator(slots=1, tc=toolchain(limits=quick, scan_syscalls=False))
    src = make_project(hostile="sleep_forever")
    try:
        first = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE])
        assert first.status is Status.TIMEOUT and "wall clock" in first.cases[0].detail
        assert not first.cacheable and first.job_key not in ev.cache
        again = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE])
        assert not again.cache_hit and ev.submissions == 2  # it ran again
    finally:
        await ev.pool.close()


async def test_input_packs_are_generated_outside_the_lab_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pack's arrays (~350 MB for the perf cases) never live in the lab process: the child
    that builds the pack writes the same bytes (the pack hash computed here, in memory), and
    the lab only reads the manifest."""
    definition = load_operator()
    small = tuple(c for c in local_cases(definition) if c.id in (SMALL_CASE, "c14_bcast3d_f16"))
    expected = input_pack_hash(small, definition=definition)

    def in_the_lab(_case: object) -> object:
        raise AssertionError("inputs generated in the lab process")

    monkeypatch.setattr(pack_module, "generate_inputs", in_the_lab)
    ev = evaluator(settings=own_settings("packs"), cases=CaseSets(local=small, perf=small[:1]))
    try:
        packs = await ev.packs(JobKind.FULL)
    finally:
        await ev.pool.close()
    assert packs["local"].pack_hash == expected and packs["local"].case_ids == tuple(
        c.id for c in small
    )
    verify_input_pack(packs["local"], definition)  # every file re-hashed against the manifest
    assert packs["perf"].case_ids == (small[0].id,)


def test_case_selection_is_checked() -> None:
    ev: Evaluator = evaluator()
    assert len(ev.select_cases("probe", None)) == 15
    assert ev.select_cases("probe", [SMALL_CASE, "c01_row_f32"]) == ("c01_row_f32", SMALL_CASE)
    with pytest.raises(CaseSelectionError, match="nope"):
        ev.select_cases("probe", ["c01_row_f32", "nope"])
    with pytest.raises(CaseSelectionError, match="full job"):
        ev.select_cases("full", ["c01_row_f32"])
