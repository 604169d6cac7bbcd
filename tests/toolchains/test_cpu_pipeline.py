"""The CPU toolchain end to end with real gcc, valgrind and bubblewrap: verdicts, precision,
cycles (deterministic, kernel-only), tree policy and compile diagnostics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from justkernel.core.receipts import CaseOutcome, JobKind, Receipt, Status
from justkernel.operators import load_operator
from justkernel.store.blobs import BlobStore
from justkernel.toolchains import check_tree
from justkernel.toolchains.cpu.simulate import est_cycles, parse_callgrind
from tests.workers.test_evaluator_shared import (
    COLUMN_CASES,
    SMALL_CASE,
    baseline_full_receipt,
    evaluator,
    fresh_dir,
    make_project,
    packs,
    require_tools,
    shared_settings,
    spec_for,
    toolchain,
)

pytestmark = pytest.mark.timeout(240)


def failing(receipt: Receipt) -> set[str]:
    return {c.case_id for c in receipt.cases if c.passed is False}


async def probe(variant: str | None, case_ids: list[str] | None = None) -> Receipt:
    ev = evaluator()
    try:
        return await ev.evaluate(make_project(variant), kind="probe", case_ids=case_ids)
    finally:
        await ev.pool.close()


async def test_baseline_passes_every_case_and_is_measured() -> None:
    require_tools(valgrind=True)
    r = await baseline_full_receipt()
    assert r.status is Status.MEASURED, r.detail
    assert [c.case_id for c in r.cases] == list(r.case_ids) and len(r.cases) == 15
    assert all(c.passed and c.outcome is CaseOutcome.PASSED for c in r.cases)
    assert all(o.error_ratio == 0 for c in r.cases for o in c.outputs)
    assert [c.case_id for c in r.cycles] == ["p01_row_f32", "p02_col_f32", "p03_full_f32"]
    for c in r.cycles:
        assert c.check.passed and c.counters is not None
        assert c.est_cycles == est_cycles(c.counters) and c.est_cycles > 100_000_000
    assert r.total_est_cycles == sum(c.est_cycles or 0 for c in r.cycles)
    # what ran is named: the template's editable files, both packs, the toolchain
    definition = load_operator()
    assert r.source_sha256 == check_tree(definition.project_dir, definition).tree_hash
    assert set(r.input_packs) == {"local", "perf"}
    assert r.executor.toolchain_id == "cpu" and "valgrind-3" in (r.executor.valgrind or "")
    assert r.executor.gcc and r.executor.sandbox and r.executor.host
    d = r.durations
    assert d.compile and d.functional and d.simulate and d.total and d.static_check
    blobs = BlobStore(shared_settings().blobs_dir)
    refs = r.all_logs()
    assert any(ref.name.endswith("callgrind.out") for ref in refs)
    assert all(blobs.has(ref.sha256) for ref in refs)
    assert r.cacheable and not r.cache_hit


async def test_cycles_are_bit_identical_and_the_fast_kernel_beats_the_baseline() -> None:
    require_tools(valgrind=True)
    baseline = await baseline_full_receipt()
    tc = toolchain()
    pack_set = await packs(JobKind.FULL)
    perf = tuple(pack_set["perf"].case_ids)
    runs = []
    for where in ("a", "b/much/deeper/folder"):  # two different host folders, fresh workdirs
        src = make_project("fast_fused_blocked", dest=fresh_dir("fast") / where / "project")
        spec = spec_for(tc, src, pack_set, JobKind.FULL, pack_set["local"].case_ids, perf)
        runs.append(await tc.run(spec, src, pack_set, fresh_dir("work") / "w", slot=0))
    first, second = runs
    assert first.status is Status.MEASURED and second.status is Status.MEASURED, first.detail
    assert first.job_key == second.job_key and first.source_sha256 == second.source_sha256
    assert [c.counters for c in first.cycles] == [c.counters for c in second.cycles]
    assert [c.est_cycles for c in first.cycles] == [c.est_cycles for c in second.cycles]
    fast = {c.case_id: c.est_cycles for c in first.cycles}
    slow = {c.case_id: c.est_cycles for c in baseline.cycles}
    for case_id, cycles in fast.items():
        assert cycles is not None and slow[case_id] is not None
        assert cycles < slow[case_id], (case_id, cycles, slow[case_id])


async def test_wrong_output_fails_exactly_the_column_cases() -> None:
    require_tools()
    r = await probe("wrong_output")
    assert r.status is Status.INCORRECT
    assert failing(r) == COLUMN_CASES
    bad = next(c for c in r.cases if c.case_id == "c03_col_f32")
    out1 = next(o for o in bad.outputs if o.name == "output1")
    assert not out1.passed and out1.first_failures and (out1.error_ratio or 0) > 0
    assert bad.logs == [] or all(ref.sha256 for ref in bad.logs)
    assert "c03_col_f32" in r.detail


async def test_sequential_float_sum_fails_precision_only_on_the_full_positive_case() -> None:
    require_tools()
    r = await probe("sequential_f32_sum")
    assert r.status is Status.INCORRECT and failing(r) == {"c05_full_pos_f32"}
    c05 = next(c for c in r.cases if c.case_id == "c05_full_pos_f32")
    out1 = next(o for o in c05.outputs if o.name == "output1")
    assert out1.elements == 1 and out1.first_failures == [0] and (out1.max_rel_error or 0) > 1e-4
    # pairwise/blocked accumulation passes the same case: the baseline and the fast kernel
    for variant in (None, "fast_fused_blocked"):
        ok = await probe(variant, ["c05_full_pos_f32"])
        assert ok.status is Status.PROBE_PASSED and not failing(ok), (variant, ok.detail)


def test_callgrind_totals_and_the_cycle_formula() -> None:
    text = (
        "version: 1\ncreator: callgrind-3.19.0\n"
        "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
        "summary: 1000 300 100 2 30 10 1 20 5\n"
        "fn=(1) confusion_mul_grad\n5 1000 300 100 2 30 10 1 20 5\n"
        "totals: 1000 300 100 2 30 10 1 20 5\n"
    )
    c = parse_callgrind(text)
    assert (c.Ir, c.I1mr, c.D1mr, c.D1mw, c.ILmr, c.DLmr, c.DLmw) == (1000, 2, 30, 10, 1, 20, 5)
    assert est_cycles(c) == 1000 + 10 * (2 + 30 + 10) + 100 * (1 + 20 + 5)
    with pytest.raises(ValueError):
        parse_callgrind("events: Ir\n")


def test_tree_policy_refuses_changed_extra_and_linked_files() -> None:
    definition = load_operator()
    src = make_project()
    clean = check_tree(src, definition)
    assert clean.ok and set(clean.editable) == {"op_kernel/cmg_kernel.c", "op_host/cmg_tiling.c"}
    (src / "build").mkdir()
    (src / "build" / "harness").write_text("local build output")  # ignored, like .git
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert check_tree(src, definition) == clean
    (src / "op_kernel" / "notes.md").write_text("tried blocking")  # editable: part of the hash
    assert check_tree(src, definition).ok
    assert check_tree(src, definition).tree_hash != clean.tree_hash
    (src / "include" / "cmg_abi.h").write_text("/* mine now */\n")
    (src / "extra.c").write_text("int x;\n")
    (src / "op_host" / "leak.h").symlink_to("/etc/passwd")
    (src / "Makefile").unlink()
    problems = "\n".join(check_tree(src, definition).problems)
    assert "include/cmg_abi.h: forbidden file differs" in problems
    assert "extra.c: extra read_only file" in problems
    assert "op_host/leak.h: symlink not allowed" in problems
    assert "Makefile: forbidden file is missing" in problems


async def test_compile_errors_are_reported_and_host_files_cannot_be_included() -> None:
    require_tools()
    src = make_project()
    kernel = src / "op_kernel" / "cmg_kernel.c"
    kernel.write_text(kernel.read_text() + "\nint broken( {\n")
    ev = evaluator()
    try:
        r = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE])
        assert r.status is Status.COMPILE_FAILED and r.compile and r.compile.failed_step == "kernel"
        assert any("error" in line for line in r.compile.diagnostics_head)
        log = next(ref for ref in r.logs if ref.name == "compile.log")
        assert b"error" in ev.blobs.get(log.sha256)
        assert r.cases == [] and r.total_est_cycles is None and r.cacheable
        # gcc runs in the sandbox: there is no /etc to include, nothing of it can be quoted
        shutil.copyfile(load_operator().project_dir / "op_kernel" / "cmg_kernel.c", kernel)
        kernel.write_text('#include "/etc/passwd"\n' + kernel.read_text())
        r = await ev.evaluate(src, kind="probe", case_ids=[SMALL_CASE])
        assert r.status is Status.COMPILE_FAILED
        text = "\n".join(r.compile.diagnostics_head if r.compile else [])
        assert "No such file or directory" in text and "root:" not in text
    finally:
        await ev.pool.close()


def test_toolchain_version_names_what_can_change_a_result(tmp_path: Path) -> None:
    tc = toolchain()
    info = tc.version_info()
    assert info["version"] == tc.version and len(tc.version) == 16
    for key in ("gcc", "valgrind", "cflags", "cycle_model", "limits", "template", "libc"):
        assert info[key], key
    assert toolchain(scan_syscalls=False).version != tc.version
