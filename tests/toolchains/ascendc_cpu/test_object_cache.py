"""H13: the per-unit object cache. A candidate that changes only its kernel reuses the host
object; a unit that reads a team file outside its key's scope is never stored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from justkernel.toolchains.ascendc_cpu.build import REUSED, BuildOutcome
from justkernel.toolchains.ascendc_cpu.objcache import ObjectCache, reads_only
from tests.toolchains.ascendc_cpu.ladder_support import toolchain
from tests.toolchains.ascendc_cpu.toolchain_support import build_float32, copy_template
from tests.workers.test_evaluator_shared import fresh_dir

pytestmark = pytest.mark.timeout(300)


async def _build(src: Path, cache: ObjectCache) -> BuildOutcome:
    out, _ = await build_float32(src, cache=cache)
    assert out.ok, out.detail
    assert out.harnesses["float32"].is_file()
    return out


async def test_a_kernel_only_change_reuses_the_host_object() -> None:
    cache = ObjectCache(fresh_dir("objcache") / "objects", toolchain().version)
    src = copy_template("objcache-a")
    first = await _build(src, cache)
    assert first.reused == () and REUSED not in first.log
    again = await _build(copy_template("objcache-b"), cache)  # same bytes, another folder
    assert again.reused == ("host", "kernel_f32")
    compiled = [line for line in again.log.splitlines() if line.startswith("$ ") and " -c " in line]
    assert compiled == [] and again.log.count(REUSED) == 2
    kernel = toolchain().target.kernel_source
    (src / kernel).write_text((src / kernel).read_text() + "\n// a kernel-only change\n")
    changed = await _build(src, cache)
    assert changed.reused == ("host",)
    assert f"{REUSED} (" in changed.log and f"-c {kernel}" in changed.log.split(REUSED)[-1]


def test_a_unit_reading_outside_its_scope_is_not_cacheable() -> None:
    host = ("op_host",)
    ii = '# 1 "op_host/x.cpp"\n# 1 "<built-in>"\n# 1 "/sandbox/lib/include/kernel_operator.h" 1 3\n'
    assert reads_only(ii, host)
    assert not reads_only(ii + '# 1 "op_host/../op_kernel/k.h" 1\n', host)
    assert not reads_only(ii + '# 1 "/sandbox/src/op_kernel/k.h" 1\n', host)
    assert not reads_only(ii + '# 1 "/proc/self/cwd/op_kernel/k.h" 1\n', host)
    assert not reads_only(ii + '# 1 "CMakeLists.txt" 1\n', host)
    assert reads_only(ii + '# 1 "op_kernel/k.h" 1\n', ("op_host", "op_kernel"))


def test_the_least_recently_used_units_are_evicted(tmp_path: Path) -> None:
    cache = ObjectCache(tmp_path / "objects", "v")
    step = tmp_path / "step"
    step.mkdir()
    (step / "host.o").write_bytes(b"\x7fELF object")
    (step / "host.ii").write_text('# 1 "op_host/x.cpp"\nint x;\n')
    for i, key in enumerate(("a", "b", "c")):
        assert cache.store(key, step, "host.o", "host.ii")
        os.utime(cache.folder / key, (1000 + i, 1000 + i))
    assert cache.fetch("a", tmp_path / "hit", "host.o", "host.ii")  # a is now the newest
    assert (tmp_path / "hit" / "host.ii").read_text() == (step / "host.ii").read_text()
    cache.evict(keep=2)
    assert sorted(p.name for p in cache.folder.iterdir()) == ["a", "c"]
    assert not cache.fetch("b", tmp_path / "miss", "host.o", "host.ii")
