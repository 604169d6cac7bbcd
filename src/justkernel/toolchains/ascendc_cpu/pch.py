"""Precompiled library headers: one per compile unit kind, built once per toolchain version.

Half of a team unit's g++ time went into parsing the library and the C++ standard headers it
includes, the same text for every candidate. Each unit's command line now starts with
`-include /sandbox/pch/jk_pch.h` (`library.Commands`), a header that includes the library's
entry headers; next to it lies `jk_pch.h.gch`, which g++ loads instead of parsing them. The
.gch is built from the library alone (no team file), in the sandbox with the unit's own flags
and macros (g++ uses a PCH only when they match; -Winvalid-pch says so in the log if not), so
what the unit compiles to is what it compiled to without it. A folder without a usable .gch
still works: g++ then reads jk_pch.h as a plain header.

Why it cannot be abused: the .gch is written by g++ from our headers into the toolchain's cache
folder, and mounted read-only; the team's `#pragma GCC pch_preprocess` (the directive that
loads a PCH from preprocessed text) is rejected by g++ anywhere but first, and ours is first.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
from pathlib import Path

from justkernel.toolchains.ascendc_cpu import library
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked

GCH = f"{library.PCH_HEADER}.gch"


class PrecompiledHeaders:
    """`<cache_dir>/pch/<unit>/{jk_pch.h, jk_pch.h.gch}`, built on first use per unit kind
    (host, kernel_f32, kernel_f16); safe to share between concurrent jobs."""

    def __init__(self, cache_dir: Path | None, limits: SandboxLimits) -> None:
        self._cache_dir = cache_dir
        self._limits = limits
        self._locks: dict[str, asyncio.Lock] = {}

    def _root(self) -> Path:
        if self._cache_dir is None:
            self._cache_dir = Path(tempfile.mkdtemp(prefix="jk-ascendc-pch-"))
            atexit.register(shutil.rmtree, self._cache_dir, True)
        return self._cache_dir / "pch"

    async def folder(self, unit: str, argv: tuple[str, ...]) -> Path:
        """The folder to mount at library.PCH_MOUNT for `unit`, whose PCH command is `argv`."""
        lock = self._locks.setdefault(unit, asyncio.Lock())
        async with lock:
            target = self._root() / unit
            if not (target / GCH).is_file():
                await self._build(target, argv)
            return target

    async def _build(self, target: Path, argv: tuple[str, ...]) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            source, out = scratch / "src", scratch / "out"
            for folder in (scratch, source, out):
                folder.mkdir(exist_ok=True)
                os.chmod(folder, 0o755)
            header = source / library.PCH_HEADER
            header.write_text(library.pch_text(target.name))
            os.chmod(header, 0o644)
            binds = {"pch": source, "lib/include": library.include_dir()}
            r = await run_checked(argv, ro_binds=binds, rw_dir=out, limits=self._limits)
            if r.status is not SandboxStatus.OK or not (out / GCH).is_file():
                raise ToolchainError(
                    f"the ascendc-cpu precompiled header for {target.name} does not build "
                    f"({r.status}):\n{r.stderr.text[-2000:]}"
                )
            os.replace(out / GCH, source / GCH)
            os.chmod(source / GCH, 0o644)
            if (target / GCH).is_file():
                return  # another process sharing the cache folder built it meanwhile
            shutil.rmtree(target, ignore_errors=True)  # a half-built folder from a crash
            os.replace(source, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
