"""The precompiled library headers: g++ really uses them, they change no byte of what a unit
compiles to, and a team cannot load a precompiled header of its own."""

from __future__ import annotations

import pytest

from justkernel.core.receipts import Status
from justkernel.toolchains.ascendc_cpu.pch import PrecompiledHeaders
from tests.toolchains.ascendc_cpu.ladder_support import cache_dir, toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import build_float32, copy_template

pytestmark = pytest.mark.timeout(300)
PRAGMA = '#pragma GCC pch_preprocess "/sandbox/pch/jk_pch.h.gch"'


def _shared_pch() -> PrecompiledHeaders:
    """The folder the toolchain itself uses, so the suite builds each PCH once."""
    tc = toolchain()
    return PrecompiledHeaders(cache_dir() / tc.version, tc.limits.compile)


async def test_units_use_the_pch_and_compile_to_the_same_bytes() -> None:
    src = copy_template("pch")
    fast, fast_dir = await build_float32(src, pch=_shared_pch())
    plain, plain_dir = await build_float32(src)
    assert fast.ok and plain.ok, (fast.detail, plain.detail)
    for unit, obj in (("host", "host.o"), ("kernel_f32", "kernel_f32.o")):
        ii = (fast_dir / unit / obj).with_suffix(".ii").read_text()
        assert PRAGMA in ii, f"{unit} did not load its precompiled header"
        assert PRAGMA not in (plain_dir / unit / obj).with_suffix(".ii").read_text()
        assert (fast_dir / unit / obj).read_bytes() == (plain_dir / unit / obj).read_bytes()
    warnings = [x for x in fast.log.splitlines() if not x.startswith("$ ") and "pch" in x]
    assert warnings == []  # -Winvalid-pch: g++ says why when it cannot use one


async def test_a_team_pch_directive_is_refused() -> None:
    src = copy_template("pch-hostile")
    kernel = src / toolchain().target.kernel_source
    kernel.write_text('#pragma GCC pch_preprocess "op_kernel/evil.gch"\n' + kernel.read_text())
    out, _ = await build_float32(src, pch=_shared_pch())
    assert not out.ok and out.status is Status.COMPILE_FAILED
    assert "pch_preprocess" in out.detail and "must be first" in out.log


async def test_warm_builds_what_every_job_shares() -> None:
    tc = toolchain()
    await tc.warm()
    folder = cache_dir() / tc.version
    assert (folder / "main.o").is_file()
    for unit in ("host", "kernel_f32", "kernel_f16"):
        assert (folder / "pch" / unit / "jk_pch.h.gch").is_file(), unit
