"""Builds and runs the engine's own test programs (engine_cases/*.cpp) with real g++ (no tests).

Why a separate program rather than the toolchain: these tests pin the engine's behaviour
(timeline formulas, each misuse check, determinism) on a hand-filled SoC, below the harness and
the sandbox that other tests cover. The program is compiled once per session, from this folder,
so `__builtin_FILE()` in a misuse names `engine_cases/cases.cpp` exactly as a kernel's relative
path would be named.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from justkernel.paths import resources_dir

HERE = Path(__file__).resolve().parent
CASES_SRC = "engine_cases/cases.cpp"
MARK = re.compile(r"//\s*MISUSE\s+(\w+)")


def include_dir() -> Path:
    return resources_dir() / "ascendc_cpu" / "include"


@functools.cache
def cases_binary() -> Path:
    """Compiles engine_cases/cases.cpp once per session; returns the executable."""
    gxx = shutil.which("g++")
    if gxx is None:
        raise RuntimeError("g++ not found")
    out = Path(tempfile.mkdtemp(prefix="jk-engine-cases-")) / "cases"
    cmd = [gxx, "-std=c++17", "-O2", "-fno-strict-aliasing", "-Wall", "-Werror"]
    cmd += [f"-I{include_dir()}", CASES_SRC, "-o", str(out)]
    done = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}"
    return out


def run_case(name: str, *flags: str) -> dict[str, Any]:
    """Runs one case; returns its JSON report (misuse, cycles per core, op stats, digests)."""
    proc = subprocess.run(
        [str(cases_binary()), name, *flags], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(proc.stdout)


def marked_site(function: str) -> tuple[str, int]:
    """(check, line) of the first `// MISUSE <check>` line inside the named C++ function."""
    lines = (HERE / CASES_SRC).read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if text.startswith(f"void {function}("))
    for i in range(start, len(lines)):
        if m := MARK.search(lines[i]):
            return m.group(1), i + 1
    raise LookupError(function)
