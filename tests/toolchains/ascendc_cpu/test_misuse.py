"""Broken kernels, one per check real hardware would punish: each gets `api_misuse` with the
check's name and the call site marked `// @site` in its source. The pipeline-hazard kernel is
the one a CPU cannot catch by its outputs: with hazard checks off its outputs match the golden,
yet the toolchain reports the race."""

from __future__ import annotations

import pytest

from justkernel.core.jobs import LOCAL_PACK
from justkernel.core.receipts import CaseOutcome, JobKind, Status
from justkernel.operators import check_case_outputs
from justkernel.toolchains import check_tree
from justkernel.toolchains.ascendc_cpu.build import build_candidate
from justkernel.toolchains.sandbox import SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked
from tests.toolchains.ascendc_cpu.ladder_support import (
    MISUSE,
    PROBE_CASE,
    Ran,
    harness_main,
    marked_site,
    misuse_project,
    run_all,
    toolchain,
)
from tests.workers.test_evaluator_shared import fresh_dir, packs

pytestmark = pytest.mark.timeout(300)

CHECKS = (
    "ub_overflow",
    "ub_misaligned",
    "datacopy_misaligned",
    "queue_empty_deque",
    "queue_alloc_past_depth",
    "queue_use_after_free",
    "gm_out_of_bounds",
    "ub_uninitialised_read",
    "pipeline_hazard",
    "gm_raw_access",
    "wait_without_set",
    # beyond the list: three more the contract names
    "ub_out_of_bounds",
    "gm_write_readonly",
    "cross_core_race",
)


# A fault on a raw GM pointer reaches the harness as a signal, with no API call to name a site:
# the record says which buffer and which block, the site stays unknown (a documented restriction).
NO_SITE = {"gm_raw_access"}
BLOCK = {"cross_core_race": 1}  # the second core is the one that finds the first one's write
_probes: dict[str, tuple[Ran, tuple[str, int]]] = {}


async def probe(check: str) -> tuple[Ran, tuple[str, int]]:
    """Every fixture's probe job (the one probe case), all run on first use, two at a time."""
    if not _probes:
        tc = toolchain()
        projects = {c: misuse_project(tc, c) for c in CHECKS}
        done = await run_all(tc, projects)
        _probes.update({c: (done[c], marked_site(projects[c])) for c in CHECKS})
    return _probes[check]


def test_every_check_has_one_fixture() -> None:
    assert sorted(p.name for p in MISUSE.iterdir() if p.is_dir()) == sorted(CHECKS)


@pytest.mark.parametrize("check", CHECKS)
async def test_broken_kernel_is_api_misuse_at_its_call_site(check: str) -> None:
    ran, where = await probe(check)
    r = ran.receipt
    assert r.status is Status.API_MISUSE, (check, r.status, r.detail)
    assert r.misuse is not None and r.misuse.check == check, (check, r.misuse)
    if check in NO_SITE:
        assert (r.misuse.file, r.misuse.line) == (None, None), r.misuse
        assert "input1" in r.misuse.message and r.misuse.block == 0, r.misuse
    else:
        assert (r.misuse.file, r.misuse.line) == where, (check, r.misuse)
        assert r.misuse.block == BLOCK.get(check, 0), r.misuse
    if check == "pipeline_hazard":  # the message names the other side of the race too
        assert "MTE2" in r.misuse.message and f"{where[0]}:" in r.misuse.message, r.misuse
    case = r.cases[0]
    assert case.case_id == PROBE_CASE and case.outcome is CaseOutcome.API_MISUSE
    assert case.misuse == r.misuse and not case.passed
    assert r.cacheable  # deterministic: the same source misuses the same way


async def test_the_pipeline_hazard_passes_a_plain_cpu_run() -> None:
    """The racy kernel, built as the toolchain builds it, run by the harness with its hazard
    checks off: every output matches the golden. Only the hazard model sees the race."""
    tc = toolchain()
    src = misuse_project(tc, "pipeline_hazard")
    pack = (await packs(JobKind.PROBE))[LOCAL_PACK]
    build = fresh_dir("hazard-build") / "build"
    build.mkdir(mode=0o755)
    main_obj = await harness_main(tc).path()
    out = await build_candidate(
        src,
        build,
        tc.target,
        check_tree(src, tc.definition).editable,
        main_obj,
        ("float32",),
        tc.limits.compile,
    )
    assert out.ok, out.detail
    out_dir = fresh_dir("hazard-run") / "out"
    out_dir.mkdir(mode=0o755)
    argv = ["/sandbox/bin/harness", "/sandbox/in", "/sandbox/out", "--no-hazard-checks"]
    binds = {"bin/harness": out.harnesses["float32"], "in": pack.case_dir(PROBE_CASE)}
    done = await run_checked(argv, ro_binds=binds, rw_dir=out_dir, limits=tc.limits.case)
    assert done.status is SandboxStatus.OK, (done.status, done.stderr.text)
    assert not (out_dir / "misuse.json").exists()
    check = check_case_outputs(pack, PROBE_CASE, out_dir, tc.operator)
    assert check.passed, check.message
