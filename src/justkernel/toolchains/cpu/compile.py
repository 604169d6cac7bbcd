"""Compile a candidate inside the sandbox, check its objects, link it with the fixed harness.

gcc runs on untrusted source, so it runs sandboxed like the kernel: the snapshot is mounted
read-only at /sandbox/src, objects go to /sandbox/out, there is no /etc and no network. (A
kernel that does `#include "/etc/shadow"` gets "No such file", and its diagnostics can quote
nothing of the host.) The harness object comes from the trusted template, compiled once per
toolchain, because the tree check already proved the candidate's copy identical.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.core.receipts import Status
from justkernel.operators import OperatorDefinition, compile_steps, static_check
from justkernel.toolchains.built_once import BuiltOnce
from justkernel.toolchains.cpu.objects import (
    executable_problems,
    linked_encodings,
    object_problems,
)
from justkernel.toolchains.diagnostics import diagnostics_head
from justkernel.toolchains.protocol import ToolchainError
from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus
from justkernel.toolchains.sandbox.checked import run_checked

SRC = "/sandbox/src"
OUT = "/sandbox/out"
DIAGNOSTIC_LINES = 30  # lines of compiler output in the receipt, errors first
LINK_MAP = "harness.map"  # where the linker put each input section (cpu.objects.linked_encodings)


@dataclass
class CompileOutcome:
    ok: bool
    harness: Path | None = None
    status: Status | None = None
    failed_step: str | None = None
    detail: str = ""
    log: str = ""
    problems: tuple[str, ...] = ()
    compile_seconds: float = 0.0
    static_seconds: float = 0.0
    cacheable: bool = True
    steps: list[str] = field(default_factory=list)

    def refuse(self, problems: tuple[str, ...]) -> None:
        """A static check failed: the first problem is the detail, all go in the receipt."""
        self.problems = problems
        self.failed_step = "static_check"
        self.status = Status.STATIC_CHECK_FAILED
        self.detail = problems[0]

    def diagnostics_head(self) -> list[str]:
        """The receipt's head of the compiler output: errors first (toolchains.diagnostics)."""
        return diagnostics_head(self.log, DIAGNOSTIC_LINES)


class HarnessObject(BuiltOnce):
    """The template's harness.o, compiled once (natively: the template is trusted)."""

    file_name = "harness.o"

    def __init__(self, definition: OperatorDefinition, cache_dir: Path | None) -> None:
        super().__init__(cache_dir)
        self._definition = definition

    def make(self, scratch: Path, out: Path) -> None:
        steps = compile_steps(self._definition.project_dir, scratch, self._definition)
        step = next(s for s in steps if s.name == "harness")
        done = subprocess.run(
            step.argv, cwd=step.cwd, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise ToolchainError(f"the template harness does not compile:\n{done.stderr}")
        os.replace(step.output, out)


async def _sandboxed_step(
    argv: tuple[str, ...], src: Path, build: Path, limits: SandboxLimits
) -> tuple[SandboxStatus, str, bool]:
    """(status, compiler output, deterministic) of one compiler call."""
    r = await run_checked(argv, ro_binds={"src": src}, rw_dir=build, cwd=SRC, limits=limits)
    text = f"$ {' '.join(argv)}\n{r.stdout.text}{r.stderr.text}"
    return r.status, text, r.status is not SandboxStatus.TIMEOUT


def _static_problems(
    kernel: Path, tiling: Path, definition: OperatorDefinition, scan_syscalls: bool
) -> tuple[str, ...]:
    spec = definition.build
    problems = static_check(kernel, spec.kernel_entry, definition)
    problems += static_check(tiling, spec.tiling_entry, definition)
    # Direct system calls are how a kernel would reach fork, socket, setitimer ... without an
    # external symbol; the scan looks at every byte (see cpu_objects).
    for obj in (kernel, tiling):
        problems += object_problems(obj, scan_bytes=scan_syscalls)
    return problems


def _linked_problems(
    exe: Path, link_map: Path, objects: tuple[Path, ...], scan_syscalls: bool
) -> tuple[str, ...]:
    problems = executable_problems(exe)
    if scan_syscalls:
        problems += linked_encodings(exe, link_map, objects)
    return problems


async def compile_candidate(
    src: Path,
    build: Path,
    definition: OperatorDefinition,
    harness_obj: Path,
    limits: SandboxLimits,
    *,
    scan_syscalls: bool = True,
) -> CompileOutcome:
    """kernel and tiling objects (sandboxed) -> static checks -> link with harness.o -> check
    the executable (no writable code, no executable stack, the candidate's code as linked)."""
    steps = {s.name: s for s in compile_steps(Path(SRC), Path(OUT), definition)}
    outcome = CompileOutcome(ok=False)
    log: list[str] = []
    start = time.monotonic()
    objects = (build / steps["kernel"].output.name, build / steps["tiling"].output.name)
    for name in ("kernel", "tiling", "static_check", "link"):
        if name == "static_check":
            t = time.monotonic()
            problems = await asyncio.to_thread(
                _static_problems, *objects, definition, scan_syscalls
            )
            outcome.static_seconds = time.monotonic() - t
            if problems:
                outcome.refuse(problems)
                break
            shutil.copyfile(harness_obj, build / steps["harness"].output.name)
            continue
        argv = steps[name].argv
        if name == "link":
            argv += (f"-Wl,-Map={OUT}/{LINK_MAP}",)
        status, text, deterministic = await _sandboxed_step(argv, src, build, limits)
        log.append(text)
        outcome.steps.append(name)
        if status is not SandboxStatus.OK:
            outcome.failed_step = name
            outcome.cacheable = deterministic
            outcome.status = (
                Status.SANDBOX_VIOLATION
                if status is SandboxStatus.SANDBOX_VIOLATION
                else Status.COMPILE_FAILED
            )
            outcome.detail = _compile_detail(name, status, text)
            break
    else:
        exe = build / steps["link"].output.name
        t = time.monotonic()
        problems = await asyncio.to_thread(
            _linked_problems, exe, build / LINK_MAP, objects, scan_syscalls
        )
        outcome.static_seconds += time.monotonic() - t
        if problems:
            outcome.refuse(problems)
        else:
            outcome.ok = True
            outcome.harness = exe
    outcome.log = "".join(log)
    outcome.compile_seconds = time.monotonic() - start - outcome.static_seconds
    return outcome


def _compile_detail(step: str, status: SandboxStatus, text: str) -> str:
    if status is SandboxStatus.TIMEOUT:
        return f"{step}: the compiler ran out of time"
    if status is SandboxStatus.RESOURCE_LIMIT:
        return f"{step}: the compiler hit a resource limit"
    errors = [line for line in text.splitlines() if "error" in line]
    return f"{step}: {errors[0].strip()}" if errors else f"{step}: compiler failed ({status})"
