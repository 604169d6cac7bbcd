"""The `ascendc-cpu` toolchain: the contest's msopgen Ascend C project, built with g++ against a
clean-room CPU implementation of the Ascend C API (resources/ascendc_cpu/), run on the local
cases in the sandbox, checked for what real hardware would punish (`api_misuse`) and measured
with a deterministic per-pipe cycle model.

    tree check ─► compile host + kernel per dtype (sandboxed g++, concurrently) ─► source and
    object checks ─► link with the cached harness main ─► functional cases ─► [full] perf
    cases with --trace (cycles, per-pipe table, trace.json blob)

Modules: `library` (where the library is, the g++ commands, the facts behind the version),
`build` (sandboxed compile and link), `pch` (the precompiled library headers), `objcache` (team
objects kept per unit), `source_check` and `objects` (what user code may hold), `run` (one case
in the sandbox and its verdict), `batch` (a dtype's cases in one sandbox, a fork per case, and
the re-run rule), `toolchain` (the stages), `soc` (the SoC parameter file). Docs:
docs/simulation-and-judging.md, "The ascendc-cpu toolchain".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from justkernel.toolchains.ascendc_cpu.toolchain import AscendcCpuToolchain

__all__ = ["AscendcCpuToolchain"]


def __getattr__(name: str) -> Any:
    """Lazy, so `soc` can be imported without the toolchain's own imports."""
    if name == "AscendcCpuToolchain":
        from justkernel.toolchains.ascendc_cpu.toolchain import AscendcCpuToolchain

        return AscendcCpuToolchain
    raise AttributeError(name)
