"""What a model reads of a failed build: the errors first, each with its file:line, then the
instantiation context and notes, the cap after (issue #15: g++ prints an error's context and a
failed call's candidate notes around it, so the first lines in the compiler's order held the
first error at best and cut the second off). With the real ascendc-cpu toolchain (sandboxed
g++ on the Ascend C template with two bad calls inside its kernel class template) and real g++
on a C++ file whose errors sit below an include chain and a deep instantiation chain."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.toolchains.ascendc_cpu.build import BuildOutcome
from justkernel.toolchains.cpu.compile import CompileOutcome
from justkernel.toolchains.diagnostics import CONTEXT_MARK, MAX_LINE_CHARS
from tests.toolchains.ascendc_cpu.ladder_support import KERNEL, run, toolchain
from tests.toolchains.ascendc_cpu.test_toolchain_pipeline import patched

SHOWN = 20  # what compile_kernel shows of the head (agents.tools)

HEADERS = {
    "copy.h": """#pragma once
template <typename T> struct Local { T v[4]; };
template <typename T> struct Global { T *p; };
template <typename T> void DataCopy(Local<T> &d, const Global<T> &s, int n) { d.v[0] = s.p[n]; }
template <typename T> void DataCopy(Global<T> &d, const Local<T> &s, int n) { d.p[n] = s.v[0]; }
""",
    "stages.h": """#pragma once
#include "copy.h"
template <typename T, int N> struct Stage {
    static void run(Local<T> &l, const Global<float> &g) { Stage<T, N - 1>::run(l, g); }
};
template <typename T> struct Stage<T, 0> {
    static void run(Local<T> &l, const Global<float> &g) { DataCopy(l, g, 0); }
};
""",
    "kernel_operator.h": '#pragma once\n#include "stages.h"\n',
}
KERNEL_CPP = """#include "inc/kernel_operator.h"
template <typename T> void Compute(Local<T> &l, const Global<float> &g) { Stage<T, 14>::run(l, g); }
extern "C" void kernel_half(short *x) { Local<short> l; Global<float> g{nullptr}; Compute(l, g); }
extern "C" void kernel_int(int *x) { Local<int> l; Global<float> g{nullptr}; Compute(l, g); }
"""


def _gxx_log(tmp_path: Path) -> str:
    """The C++ file's compile log as a build step logs it: the command, then g++'s output."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    (tmp_path / "inc").mkdir()
    for name, text in HEADERS.items():
        (tmp_path / "inc" / name).write_text(text)
    (tmp_path / "k.cpp").write_text(KERNEL_CPP)
    argv = ["g++", "-std=c++17", "-c", "k.cpp", "-o", "k.o"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    return f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}"


def test_errors_below_context_come_first_in_both_toolchains_heads(tmp_path: Path) -> None:
    log = _gxx_log(tmp_path)
    assert not log.splitlines()[1].startswith("inc/stages.h:7")  # g++ starts with context
    for outcome in (BuildOutcome(log=log), CompileOutcome(ok=False, log=log)):
        head = outcome.diagnostics_head()
        first, second = head[0], next(line for line in head[1:] if "error:" in line)
        assert first.startswith("inc/stages.h:7:") and "error:" in first and "short" in first
        assert second.startswith("inc/stages.h:7:") and "Local<int>" in second
        assert head.index(second) < SHOWN
        # then the context, in g++'s order: the include chain, the instantiation chain
        context = head[head.index(CONTEXT_MARK) + 1 :]
        assert context[0].startswith("In file included from inc/kernel_operator.h:2")
        assert any("required from here" in line for line in context)
        assert not any(line.startswith("$ ") for line in head)


def test_a_line_longer_than_the_limit_is_clipped_visibly() -> None:
    long = "k.cpp:1:1: error: " + "T" * (MAX_LINE_CHARS * 3)
    (line,) = BuildOutcome(log=long).diagnostics_head()
    assert len(line) < MAX_LINE_CHARS + 60 and line.endswith("more characters]")


async def test_an_ascendc_kernel_with_two_bad_calls_shows_both_errors_first() -> None:
    project, line = patched("two-errors", "Mul(out, in, in0, count); Add(out, in, in1, count);")
    r = (await run(toolchain(), project)).receipt
    assert r.status is Status.COMPILE_FAILED and r.compile is not None
    shown = r.compile.diagnostics_head[:SHOWN]
    errors = [s for s in shown if s.startswith(f"{KERNEL}:{line}:") and "error:" in s]
    assert len(errors) == 2, shown
    assert "'Mul(" in errors[0] and "'Add(" in errors[1]
    assert shown[0] == errors[0]  # not the instantiation context g++ printed first
    assert CONTEXT_MARK in shown and any("In instantiation of" in s for s in shown)
