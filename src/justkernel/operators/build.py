"""The fixed build of a project: exact compile commands as argv lists, and static object checks.

The toolchain runs these argv lists itself (in its sandbox) instead of `make`, so what is compiled
and with which flags cannot depend on anything a team can edit. The kernel and the tiling become
separate objects so each can be checked before it is linked or run.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from justkernel.operators.definition import OperatorDefinition, load_operator

HARNESS_BINARY = "harness"


@dataclass(frozen=True)
class CompileStep:
    """One compiler invocation; run `argv` with `cwd` as the working directory."""

    name: str  # "kernel", "tiling", "harness" or "link"
    argv: tuple[str, ...]
    cwd: Path
    output: Path


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    harness: Path  # the linked executable (exists only when ok)
    objects: dict[str, Path]  # "kernel" / "tiling" / "harness" -> object file
    failed_step: str | None
    log: str  # compiler output of every step, in order
    seconds: float
    problems: tuple[str, ...] = ()  # static check findings (a non-empty tuple means not ok)


def _rel(path: Path, cwd: Path) -> str:
    return os.path.relpath(path, cwd)


def compile_steps(
    project_dir: Path, build_dir: Path, definition: OperatorDefinition | None = None
) -> tuple[CompileStep, ...]:
    """kernel, tiling and harness objects, then the link; paths relative to `project_dir`."""
    definition = definition or load_operator()
    spec = definition.build
    cwd = Path(project_dir).resolve()
    out = Path(build_dir).resolve()
    includes = tuple(f"-I{inc}" for inc in spec.include_dirs)
    sources = {
        "kernel": spec.kernel_source,
        "tiling": spec.tiling_source,
        "harness": spec.harness_source,
    }
    steps = []
    objects = {}
    for name, source in sources.items():
        obj = out / f"{Path(source).stem}.o"
        objects[name] = obj
        argv = (spec.compiler, *spec.cflags, *includes, "-c", source, "-o", _rel(obj, cwd))
        steps.append(CompileStep(name=name, argv=argv, cwd=cwd, output=obj))
    exe = out / HARNESS_BINARY
    link_inputs = tuple(_rel(objects[n], cwd) for n in ("harness", "tiling", "kernel"))
    link = (spec.compiler, *link_inputs, "-o", _rel(exe, cwd), *spec.ldlibs)
    steps.append(CompileStep(name="link", argv=link, cwd=cwd, output=exe))
    return tuple(steps)


def _tool_lines(argv: list[str]) -> list[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def static_check(
    obj: Path, entry: str, definition: OperatorDefinition | None = None
) -> tuple[str, ...]:
    """Problems with a kernel or tiling object: foreign symbols, constructors, extra globals.

    External references must come from the allow-list (no I/O, threads or syscalls), no section
    may run code before main, and the only global definition is the entry point, so a team cannot
    interpose on the harness or the C library.
    """
    definition = definition or load_operator()
    spec = definition.build
    problems = []
    allowed = set(spec.allowed_external_symbols)
    for line in _tool_lines(["nm", "-u", "--format=posix", str(obj)]):
        symbol = line.split()[0]
        if symbol not in allowed:
            problems.append(f"{obj.name}: references {symbol}, which is not allowed")
    for line in _tool_lines(["nm", "-g", "--defined-only", "--format=posix", str(obj)]):
        symbol = line.split()[0]
        if symbol != entry:
            problems.append(f"{obj.name}: defines global {symbol}; make it static")
    sections = set()
    for line in _tool_lines(["readelf", "-SW", str(obj)]):
        fields = line.replace("[", " ").replace("]", " ").split()
        if len(fields) > 1 and fields[0].isdigit():
            sections.add(fields[1])
    for forbidden in spec.forbidden_sections:
        found = [s for s in sections if s == forbidden or s.startswith(forbidden + ".")]
        if found:
            problems.append(f"{obj.name}: has section {found[0]} (code that runs before main)")
    return tuple(problems)


def build_project(
    project_dir: Path,
    build_dir: Path,
    definition: OperatorDefinition | None = None,
    timeout: float = 120.0,
) -> BuildResult:
    """Compile, statically check and link natively (no sandbox: trusted callers and tests)."""
    definition = definition or load_operator()
    start = time.monotonic()
    Path(build_dir).mkdir(parents=True, exist_ok=True)
    steps = compile_steps(project_dir, build_dir, definition)
    objects = {s.name: s.output for s in steps if s.name != "link"}
    exe = steps[-1].output
    log: list[str] = []

    def result(ok: bool, failed: str | None, problems: tuple[str, ...] = ()) -> BuildResult:
        return BuildResult(
            ok, exe, objects, failed, "".join(log), time.monotonic() - start, problems
        )

    for step in steps:
        if step.name == "link":
            problems = static_check(objects["kernel"], definition.build.kernel_entry, definition)
            problems += static_check(objects["tiling"], definition.build.tiling_entry, definition)
            if problems:
                return result(False, "static_check", problems)
        done = subprocess.run(
            step.argv, cwd=step.cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
        log.append(f"$ {' '.join(step.argv)}\n{done.stdout}{done.stderr}")
        if done.returncode != 0:
            return result(False, step.name)
    return result(True, None)
