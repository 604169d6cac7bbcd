"""Build one candidate: the host object and one kernel object per dtype, compiled concurrently
with g++ inside the sandbox, checked, then linked per dtype with the cached harness main.

    scan team sources ─► g++ host.o │ kernel_f32.o │ kernel_f16.o (sandboxed, at once)
      ─► preprocessed-line scan ─► object checks ─► link harness_<dt> (sandboxed) ─► exe checks

g++ sees the snapshot read-only at /sandbox/src (its cwd, so paths stay relative), the
library read-only at /sandbox/lib/include and the unit's precompiled library headers at
/sandbox/pch (`pch`); each step writes into a folder of its own, so the steps can run at the
same time. The harness main comes from the library (trusted), compiled
natively once per toolchain version (`HarnessMain`).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.core.receipts import Status
from justkernel.operators.definition import AscendcTarget
from justkernel.toolchains.ascendc_cpu import library, objects, source_check
from justkernel.toolchains.ascendc_cpu.objcache import ObjectCache, reads_only, scope_of
from justkernel.toolchains.ascendc_cpu.pch import PrecompiledHeaders
from justkernel.toolchains.built_once import BuiltOnce
from justkernel.toolchains.cpu.objects import executable_problems
from justkernel.toolchains.diagnostics import diagnostics_head
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked

SRC = "/sandbox/src"
OUT = "/sandbox/out"
DIAGNOSTIC_LINES = 30
LINK_MAP = "harness.map"
HOST = "host"
REUSED = "# reused from the object cache"  # the log line of a unit not compiled again


@dataclass
class BuildOutcome:
    ok: bool = False
    harnesses: dict[str, Path] = field(default_factory=dict)  # dtype -> executable
    status: Status | None = None
    failed_step: str | None = None
    detail: str = ""
    log: str = ""
    problems: tuple[str, ...] = ()
    compile_seconds: float = 0.0
    static_seconds: float = 0.0
    cacheable: bool = True
    reused: tuple[str, ...] = ()  # steps whose object came from the object cache

    def refuse(self, step: str, problems: tuple[str, ...]) -> None:
        self.problems = problems
        self.failed_step = step
        self.status = Status.STATIC_CHECK_FAILED
        self.detail = problems[0]

    def diagnostics_head(self) -> list[str]:
        """The receipt's head of the compiler output: errors first (toolchains.diagnostics)."""
        return diagnostics_head(self.log, DIAGNOSTIC_LINES, skip=("$ ", REUSED))


class HarnessMain(BuiltOnce):
    """main.o of the library's harness, with jk_soc_params.h from the SoC file; built once
    per toolchain version (natively: it is our code) and kept in the cache folder."""

    file_name = "main.o"

    def make(self, scratch: Path, out: Path) -> None:
        generated = scratch / "generated"
        library.write_soc_header(generated)
        argv = library.main_argv(library.include_dir(), generated, library.harness_source(), out)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise ToolchainError(f"the ascendc-cpu harness does not compile:\n{done.stderr}")


@dataclass(frozen=True)
class Step:
    name: str  # host, kernel_f32, kernel_f16
    argv: tuple[str, ...]
    output: str  # file name in the step's folder
    pch_argv: tuple[str, ...]  # the command that builds its precompiled headers

    @property
    def preprocessed(self) -> str:
        return Path(self.output).with_suffix(".ii").name


def compile_steps(target: AscendcTarget, dtypes: Iterable[str]) -> list[Step]:
    commands = library.Commands(target)
    gch = f"{OUT}/{library.PCH_HEADER}.gch"
    steps = [Step(HOST, commands.host(f"{OUT}/host.o"), "host.o", commands.pch(HOST, gch))]
    for dtype in dtypes:
        suffix = library.DTYPES[dtype][1]
        name = f"kernel_{suffix}"
        argv = commands.kernel(dtype, f"{OUT}/{name}.o")
        steps.append(Step(name, argv, f"{name}.o", commands.pch(name, gch)))
    return steps


async def _sandboxed(
    argv: tuple[str, ...],
    binds: dict[str, Path],
    folder: Path,
    limits: SandboxLimits,
    cwd: str | None = SRC,
) -> tuple[SandboxStatus, str]:
    os.makedirs(folder, mode=0o755, exist_ok=True)
    os.chmod(folder, 0o755)
    r = await run_checked(argv, ro_binds=binds, rw_dir=folder, cwd=cwd, limits=limits)
    return r.status, f"$ {' '.join(argv)}\n{r.stdout.text}{r.stderr.text}"


def _fail(outcome: BuildOutcome, step: str, status: SandboxStatus, text: str) -> None:
    outcome.failed_step = step
    outcome.cacheable = status is not SandboxStatus.TIMEOUT
    outcome.status = (
        Status.SANDBOX_VIOLATION
        if status is SandboxStatus.SANDBOX_VIOLATION
        else Status.COMPILE_FAILED
    )
    outcome.detail = explain(step, status, text)


async def build_candidate(
    src: Path,
    build: Path,
    target: AscendcTarget,
    editable: Iterable[str],
    main_obj: Path,
    dtypes: tuple[str, ...],
    limits: SandboxLimits,
    *,
    scan_syscalls: bool = True,
    cache: ObjectCache | None = None,
    pch: PrecompiledHeaders | None = None,
) -> BuildOutcome:
    """See the module docstring; the first failing step decides the outcome. With `cache`,
    a unit compiled before from the same files is copied from it instead of compiled. Without
    `pch`, each unit parses the library headers itself (same objects, slower)."""
    outcome = BuildOutcome()
    start = time.monotonic()
    t = time.monotonic()
    problems = await asyncio.to_thread(source_check.scan_sources, src, list(editable))
    outcome.static_seconds += time.monotonic() - t
    if problems:
        outcome.refuse("source_check", problems)
        return outcome
    steps = compile_steps(target, dtypes)
    keys, pending = await asyncio.to_thread(_from_cache, cache, src, build, steps)
    outcome.reused = tuple(s.name for s in steps if s not in pending)

    async def compile_unit(step: Step) -> tuple[SandboxStatus, str]:
        binds = {"src": src, "lib/include": library.include_dir()}
        if pch is not None:
            binds["pch"] = await pch.folder(step.name, step.pch_argv)
        else:
            binds["pch"] = await asyncio.to_thread(_plain_pch_folder, build, step.name)
        return await _sandboxed(step.argv, binds, build / step.name, limits)

    done = await asyncio.gather(*(compile_unit(s) for s in pending))
    outcome.log = "".join(
        f"{REUSED} ({keys[s.name][:16]}): {' '.join(s.argv)}\n"
        for s in steps
        if s.name in outcome.reused
    )
    outcome.log += "".join(text for _, text in done)
    for step, (status, text) in zip(pending, done, strict=True):
        if status is not SandboxStatus.OK:
            _fail(outcome, step.name, status, text)
            outcome.compile_seconds = time.monotonic() - start - outcome.static_seconds
            return outcome
    t = time.monotonic()
    problems = await asyncio.to_thread(_object_problems, build, steps, scan_syscalls)
    outcome.static_seconds += time.monotonic() - t
    if problems:
        outcome.refuse("static_check", problems)
        outcome.compile_seconds = time.monotonic() - start - outcome.static_seconds
        return outcome
    if cache is not None:
        await asyncio.to_thread(_to_cache, cache, keys, build, pending)
    await _link_all(outcome, build, steps, main_obj, limits, scan_syscalls)
    outcome.compile_seconds = time.monotonic() - start - outcome.static_seconds
    return outcome


def _plain_pch_folder(build: Path, unit: str) -> Path:
    """jk_pch.h without its .gch: g++ reads it as a plain header."""
    folder = build / f"pch_{unit}"
    folder.mkdir(mode=0o755, exist_ok=True)
    (folder / library.PCH_HEADER).write_text(library.pch_text(unit))
    os.chmod(folder / library.PCH_HEADER, 0o644)
    return folder


def _from_cache(
    cache: ObjectCache | None, src: Path, build: Path, steps: list[Step]
) -> tuple[dict[str, str], list[Step]]:
    """The units' keys, and the steps the cache cannot serve (to compile)."""
    if cache is None:
        return {}, list(steps)
    keys = {s.name: cache.key(s.name, s.argv, src) for s in steps}
    pending = [
        s for s in steps if not cache.fetch(keys[s.name], build / s.name, s.output, s.preprocessed)
    ]
    return keys, pending


def _to_cache(cache: ObjectCache, keys: dict[str, str], build: Path, steps: list[Step]) -> None:
    """Keep the freshly compiled units that passed the checks and read only in scope."""
    for s in steps:
        ii = build / s.name / s.preprocessed
        if ii.is_file() and reads_only(ii.read_text(errors="replace"), scope_of(s.name)):
            cache.store(keys[s.name], build / s.name, s.output, s.preprocessed)


def _object_problems(build: Path, steps: list[Step], scan_syscalls: bool) -> tuple[str, ...]:
    units = {}
    for s in steps:
        ii = build / s.name / s.preprocessed
        units[s.name] = ii.read_text(errors="replace") if ii.is_file() else ""
    problems = source_check.scan_preprocessed(units)
    for s in steps:
        problems += objects.object_problems(build / s.name / s.output, scan_bytes=scan_syscalls)
    return problems


async def _link_all(
    outcome: BuildOutcome,
    build: Path,
    steps: list[Step],
    main_obj: Path,
    limits: SandboxLimits,
    scan_syscalls: bool,
) -> None:
    host = next(s for s in steps if s.name == HOST)
    kernels = [s for s in steps if s.name != HOST]

    async def link(kernel: Step) -> tuple[SandboxStatus, str, Path]:
        suffix = kernel.name.removeprefix("kernel_")
        folder = build / f"link_{suffix}"
        binds = {
            "obj/main.o": main_obj,
            "obj/host.o": build / HOST / host.output,
            "obj/kernel.o": build / kernel.name / kernel.output,
        }
        objs = ("/sandbox/obj/main.o", "/sandbox/obj/host.o", "/sandbox/obj/kernel.o")
        argv = library.Commands.link(objs, f"{OUT}/harness", f"{OUT}/{LINK_MAP}")
        status, text = await _sandboxed(argv, binds, folder, limits, cwd=None)
        return status, text, folder

    done = await asyncio.gather(*(link(k) for k in kernels))
    outcome.log += "".join(text for _, text, _ in done)
    for kernel, (status, text, _) in zip(kernels, done, strict=True):
        if status is not SandboxStatus.OK:
            _fail(outcome, f"link_{kernel.name.removeprefix('kernel_')}", status, text)
            return
    t = time.monotonic()
    problems: tuple[str, ...] = ()
    for kernel, (_, _, folder) in zip(kernels, done, strict=True):
        user = (build / HOST / host.output, build / kernel.name / kernel.output)
        problems += await asyncio.to_thread(
            _linked_problems, folder / "harness", folder / LINK_MAP, user, scan_syscalls
        )
    outcome.static_seconds += time.monotonic() - t
    if problems:
        outcome.refuse("static_check", problems)
        return
    by_suffix = {v[1]: k for k, v in library.DTYPES.items()}
    for kernel, (_, _, folder) in zip(kernels, done, strict=True):
        outcome.harnesses[by_suffix[kernel.name.removeprefix("kernel_")]] = folder / "harness"
    outcome.ok = True


def _linked_problems(
    exe: Path, link_map: Path, user: tuple[Path, ...], scan_syscalls: bool
) -> tuple[str, ...]:
    problems = executable_problems(exe)
    if scan_syscalls:
        # the map names the objects by their sandbox paths: /sandbox/obj/host.o, kernel.o
        host, kernel = user
        problems += objects.linked_code(exe, link_map, {"host.o": host, "kernel.o": kernel})
    return problems


# -- what went wrong, in one line ------------------------------------------------------------
_STATIC_ASSERT = re.compile(r"error: static assertion failed: (.+)")
_NOT_MEMBER = re.compile(r"error: '([^']+)' is not a member of '([^']+)'")
_NOT_DECLARED = re.compile(r"error: '([^']+)' was not declared in this scope")
_NO_MEMBER = re.compile(r"error: '([^']+)' has no member named '([^']+)'")
_USER_SITE = re.compile(r"^((?:op_host|op_kernel)/[^:\s]+):(\d+):(?:\d+:)?")


def _user_site(text: str) -> str | None:
    for line in text.splitlines():
        m = _USER_SITE.match(line.strip())
        if m:
            return f"{m.group(1)}:{m.group(2)}"
    return None


def explain(step: str, status: SandboxStatus, text: str) -> str:
    """The detail line of a failed step; a missing Ascend C API is named as such."""
    if status is SandboxStatus.TIMEOUT:
        return f"{step}: the compiler ran out of time"
    if status is SandboxStatus.RESOURCE_LIMIT:
        return f"{step}: the compiler hit a resource limit"
    site = _user_site(text)
    at = f" (at {site})" if site else ""
    for line in text.splitlines():
        m = _STATIC_ASSERT.search(line)
        if m:
            return f"{step}: {m.group(1).strip()}{at}"
        m = _NOT_MEMBER.search(line)
        if m:
            return (
                f"{step}: missing API {m.group(2)}::{m.group(1)}: the ascendc-cpu library "
                f"does not implement it (or it is misspelt){at}"
            )
        m = _NO_MEMBER.search(line)
        if m:
            return (
                f"{step}: missing API {m.group(1)}::{m.group(2)}: the ascendc-cpu library "
                f"does not implement it (or it is misspelt){at}"
            )
        m = _NOT_DECLARED.search(line)
        if m:
            return (
                f"{step}: missing API or undeclared name `{m.group(1)}`: not in the "
                f"ascendc-cpu library nor the source{at}"
            )
    errors = [line for line in text.splitlines() if "error" in line]
    return f"{step}: {errors[0].strip()}" if errors else f"{step}: compiler failed ({status})"
