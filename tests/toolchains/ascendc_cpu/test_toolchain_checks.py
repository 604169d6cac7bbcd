"""The ascendc-cpu toolchain's own rules, without a compiler: what the source scan refuses and
lets through, which symbols a team object may reference, how g++'s errors become one line, and
how the harness's files become a receipt's misuse record and pipeline (or are refused)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from justkernel.operators import load_operator
from justkernel.operators.definition import OperatorDefinitionError
from justkernel.toolchains.ascendc_cpu.build import explain
from justkernel.toolchains.ascendc_cpu.objects import object_problems, symbol_allowed
from justkernel.toolchains.ascendc_cpu.run import HarnessOutputError, read_misuse, read_pipeline
from justkernel.toolchains.ascendc_cpu.source_check import scan_preprocessed, scan_text
from justkernel.toolchains.registry import TOOLCHAINS
from justkernel.toolchains.sandbox import SandboxStatus

K = "op_kernel/k.cpp"


def problems(text: str) -> list[str]:
    return scan_text(K, text)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("void f() { jk::g_engine = nullptr; }", f"{K}:1: `jk` names"),
        ("int x = g_engine;", f"{K}:1: `g_engine` names"),
        ("int a;\nint b = JK_SECRET;", f"{K}:2: `JK_SECRET` names"),
        ("auto p = jk_ub_offset;", f"{K}:1: `jk_ub_offset` names"),
        ("void f() { j\\\nk::eng(); }", f"{K}:1: `jk` names"),  # a line splice
        ('void f() { asm("nop"); }', f"{K}:1: `asm` is not allowed"),
        ('void f() { __asm__ volatile(""); }', f"{K}:1: `__asm__` is not allowed"),
        ("#define CAT(a, b) a##b", f"{K}:1: token pasting (##)"),
        ("#define private public", f"{K}:1: redefining the keyword `private`"),
        ("  #  undef class", f"{K}:1: redefining the keyword `class`"),
        ('#include "jk_ascendc/engine.h"', f"{K}:1: #include <jk_ascendc/engine.h>"),
        ("#include </etc/passwd>", f"{K}:1: #include </etc/passwd>"),
        ('int y __attribute__((alias("_ZN2jk8g_engineE")));', f"{K}:1: attribute `alias`"),
        ("__attribute__((constructor)) void g() {}", f"{K}:1: attribute `constructor`"),
    ],
)
def test_the_source_scan_refuses(source: str, expected: str) -> None:
    found = problems(source)
    assert found and found[0].startswith(expected), found


def test_the_source_scan_lets_ordinary_ascend_c_through() -> None:
    text = """#include "kernel_operator.h"
// jk::g_engine in a comment, asm too
/* and ## here */
const char* s = "jk::g_engine ## asm";
constexpr int32_t BUFFER_NUM = 2;
int z __attribute__((aligned(32)));
#define TILE_BYTES (BUFFER_NUM * 32)
using namespace AscendC;
extern "C" __global__ __aicore__ void confusion_mul_grad(GM_ADDR x, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);  int k = JK_OP_TYPE; char c = '#';
    TPipe pipe; jkx(); int asmx = 0; int g_engines = 1;
}
"""
    assert problems(text) == []


def test_the_preprocessed_scan_checks_team_lines_only() -> None:
    unit = (
        '# 1 "op_kernel/k.cpp"\nint a;\n__asm__("syscall");\n'
        '# 9 "/sandbox/lib/include/jk_ascendc/engine.h"\nasm("library");\n'
    )
    assert scan_preprocessed({"kernel": unit}) == (
        "op_kernel/k.cpp:2: `__asm__` is not allowed (inline assembly)",
    )


@pytest.mark.parametrize(
    "symbol",
    [
        "memcpy",
        "expf",
        "malloc",
        "__truncsfhf2",
        "_ZN2jk6Engine5issueENS_4PipeEPKcmNS_4SiteE",  # compiled once, in the harness object
        "_ZN2jk3ops7copy_inEjRKNS0_4TRefERKNS0_4GRefEjNS_4SiteE",  # an instruction body, too
        "_Znwm",
        "_ZdlPvm",
        "__cxa_throw",
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
        "_ZSt20__throw_length_errorPKc",
        "_ZTISt9exception",
        "_ZTVN10__cxxabiv120__si_class_type_infoE",
    ],
)
def test_what_the_library_and_a_kernel_need_is_allowed(symbol: str) -> None:
    assert symbol_allowed(symbol)


@pytest.mark.parametrize(
    "symbol",
    [
        "fopen",
        "open",
        "write",
        "exit",
        "_exit",
        "abort_if_not",
        "system",
        "dlopen",
        "syscall",
        "ptrace",
        "pthread_create",
        "atexit",
        "__cxa_atexit",
        "signal",
        "_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
        "_ZN2jk8g_engineE",
        "_ZN2jk3ops5tableE",  # data in the library's namespaces is never a kernel's to reach
        "_ZN2jk10run_blocksERNS_6EngineEjPFvPvjES2_",  # the harness's block threads
    ],
)
def test_files_processes_and_threads_are_not(symbol: str) -> None:
    assert not symbol_allowed(symbol)


def test_gxx_errors_become_one_line_naming_the_api() -> None:
    out = (
        "$ g++ ...\nIn file included from /sandbox/lib/include/kernel_operator.h:9,\n"
        "op_kernel/k.cpp: In member function 'void K::Run()':\n"
        "op_kernel/k.cpp:42:14: error: 'Gatherx' is not a member of 'AscendC'\n"
    )
    assert explain("kernel_f32", SandboxStatus.NONZERO_EXIT, out) == (
        "kernel_f32: missing API AscendC::Gatherx: the ascendc-cpu library does not implement "
        "it (or it is misspelt) (at op_kernel/k.cpp:42)"
    )
    undeclared = "op_host/h.cpp:7:5: error: 'SetTilingKeyX' was not declared in this scope\n"
    assert explain("host", SandboxStatus.NONZERO_EXIT, undeclared).startswith(
        "host: missing API or undeclared name `SetTilingKeyX`"
    )
    assert explain("host", SandboxStatus.TIMEOUT, "") == "host: the compiler ran out of time"


def write(folder: Path, name: str, data: object) -> Path:
    (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))
    return folder


RUN = {
    "schema": 1,
    "soc": "ascend910b",
    "block_dim": 2,
    "workspace_bytes": 0,
    "tiling_bytes": 64,
    "cycles": {
        "total": 900,
        "bound_pipe": "MTE2",
        "cores": [
            {"block": 0, "makespan": 900, "pipes": {"MTE2": {"busy": 800, "instructions": 4}}},
            {"block": 1, "makespan": 700, "pipes": {"MTE2": {"busy": 600, "instructions": 4}}},
        ],
        "pipes": {
            "MTE2": {"busy": 800, "utilisation": 0.889},
            "V": {"busy": 90, "utilisation": 0.1},
        },
    },
    "ops": [],
    "trace_truncated": False,
}


def test_run_json_becomes_the_pipeline_section(tmp_path: Path) -> None:
    p = read_pipeline(write(tmp_path, "run.json", RUN))
    assert (p.total, p.bound_pipe, p.block_dim, p.soc) == (900, "MTE2", 2, "ascend910b")
    assert p.pipes["MTE2"].busy == 800 and p.pipes["MTE2"].instructions == 4
    assert p.pipes["V"].instructions is None  # the slowest core did not list it
    assert [(c.block, c.makespan) for c in p.cores] == [(0, 900), (1, 700)]


@pytest.mark.parametrize(
    "text", ["{", "[]", json.dumps({"cycles": {"total": "fast"}}), "x" * (5 << 20)]
)
def test_a_run_json_not_in_the_harness_format_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(HarnessOutputError):
        read_pipeline(write(tmp_path, "run.json", text))


def test_misuse_json_is_read_bounded(tmp_path: Path) -> None:
    record = {"check": "ub_overflow", "message": "m" * 5000, "file": K, "line": 12, "block": 0}
    m = read_misuse(write(tmp_path, "misuse.json", record))
    assert (m.check, m.file, m.line, m.block, len(m.message)) == ("ub_overflow", K, 12, 0, 500)
    assert m.site() == f"{K}:12"
    with pytest.raises(HarnessOutputError):
        read_misuse(write(tmp_path, "misuse.json", {"message": "no check"}))
    with pytest.raises(HarnessOutputError):
        read_misuse(tmp_path / "absent")


def test_the_registry_and_the_operator_know_the_target() -> None:
    assert "ascendc-cpu" in TOOLCHAINS
    op = load_operator()
    target = op.ascendc_target()
    assert target.project_dir.name == "ascendc" and target.name == op.name
    assert target.paths.access("op_kernel/confusion_mul_grad.cpp") == "editable"
    assert target.paths.access("op_host/CMakeLists.txt") == "forbidden"
    assert target.paths.access("build.sh") == "read_only"
    assert target.cases_file == op.cases_file  # the same cases, so the same input packs
    with pytest.raises(OperatorDefinitionError, match="no \\[ascendc\\] section"):
        op.model_copy(update={"ascendc": None}).ascendc_target()


HIDDEN = {
    # the classic: the bytes of `syscall; ret` in an immediate, reachable by a jump to +1
    "immediate": "volatile unsigned sink; void f() { sink = 0xc3050fu; }",
    # a real system call instruction (g++ accepts asm; the source scan refuses it earlier)
    "instruction": 'void f() { asm volatile("syscall" ::: "rax", "rcx", "r11", "memory"); }',
    # a displacement chosen by the source: an array offset of 0x50f00 bytes
    "displacement": "char f(const char* p) { return p[0x050f00]; }",
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_the_byte_scan_still_refuses_chosen_bytes(tmp_path: Path, name: str) -> None:
    src = tmp_path / "k.cpp"
    src.write_text(HIDDEN[name] + "\n")
    obj = tmp_path / "k.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-c", str(src), "-o", str(obj)], check=True)
    found = object_problems(obj)
    assert any("`syscall` instruction (0f 05)" in p for p in found), found


def test_compiler_layout_is_let_through(tmp_path: Path) -> None:
    """A long forward branch (`jae` +0x50f: 0f 83 0f 05 00 00) and an opcode after a
    register move are layout, not a choice of the source."""
    body = "\n".join(f"    if (a[{i}] > {i}) s += a[{i}] * {i + 3};" for i in range(120))
    src = tmp_path / "k.cpp"
    src.write_text(f"int f(const int* a) {{\n  int s = 0;\n{body}\n  return s;\n}}\n")
    obj = tmp_path / "k.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-c", str(src), "-o", str(obj)], check=True)
    assert object_problems(obj) == ()
