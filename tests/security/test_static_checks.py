"""Issue 11, finding 6: the static checks of kernel code could be bypassed.

Each test lays a hostile kernel (tests/fixtures/hostile_kernels/) over the template and runs it
through the real CPU toolchain: sandboxed gcc, the object checks, the bubblewrap sandbox with
its seccomp filter. An attacker who controls the kernel source tried: a `syscall` hidden in an
immediate, memory it can write and then execute, code in `.init`/`.fini`/constructor tables and
an IFUNC resolver (all run outside `main`, outside callgrind's toggle), and a valgrind client
request that would switch the counting off.
"""

from __future__ import annotations

import asyncio
import platform
import re
import subprocess
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.operators import build_project, load_operator
from justkernel.toolchains.cpu import elf_read
from justkernel.toolchains.cpu.objects import object_problems
from justkernel.toolchains.sandbox import SandboxLimits, SandboxStatus, run_sandboxed
from justkernel.toolchains.sandbox import seccomp as sandbox_seccomp
from tests.toolchains.test_cpu_hostile import codes, run_hostile
from tests.workers.test_evaluator_shared import SMALL_CASE, fresh_dir, make_project

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 encodings and syscalls"),
]

REPO = Path(__file__).resolve().parents[2]
SYSCALL_RET = int.from_bytes(bytes.fromhex("0f05c300"), "little")  # syscall; ret


async def test_a_syscall_hidden_in_an_immediate_is_refused() -> None:
    r, work = await run_hostile("hidden_syscall", scan_syscalls=True)
    assert r.status is Status.STATIC_CHECK_FAILED, (r.status, r.detail)
    assert r.compile is not None
    assert any("`syscall`" in p and "offset 0x1" in p for p in r.compile.problems), r.compile
    assert r.cases == [] and not (work / "build" / "harness").exists()


def _gadget_bytes(exe: Path) -> int:
    """The four displacement bytes of `jk_gadget`'s lea (at +3) in a linked executable."""
    symbols = subprocess.run(["nm", str(exe)], check=True, capture_output=True, text=True)
    addr = (
        next(
            int(line.split()[0], 16)
            for line in symbols.stdout.splitlines()
            if line.endswith(" jk_gadget")
        )
        + 3
    )
    elf = elf_read.read(exe)
    off = next(o for g in elf.segments if (o := g.file_range(addr, 4)) is not None)
    return int.from_bytes(elf.data[off : off + 4], "little")


async def test_a_syscall_spelled_by_a_relocation_is_refused() -> None:
    """The attacker links a trial build (the layout is deterministic) to pick the addend."""
    trial = build_project(make_project(hostile="relocated_syscall"), fresh_dir("reloc-trial"))
    assert trial.ok, trial.log
    signed = int.from_bytes(
        _gadget_bytes(trial.harness).to_bytes(4, "little"), "little", signed=True
    )
    addend = {"0 /* @JK_ADDEND@ */": str(SYSCALL_RET - signed)}
    armed = build_project(
        make_project(hostile="relocated_syscall", replace=addend), fresh_dir("reloc")
    )
    assert armed.ok and _gadget_bytes(armed.harness) == SYSCALL_RET  # 0f 05 c3 00 once linked
    assert object_problems(armed.objects["kernel"]) == ()  # ... and zeros in the object

    r, _ = await run_hostile("relocated_syscall", addend, scan_syscalls=True)
    assert r.status is Status.STATIC_CHECK_FAILED, (r.status, r.detail)
    assert r.compile is not None
    assert any("as linked" in p and "`syscall`" in p for p in r.compile.problems), r.compile


# mode -> the attack; see the fixture's header comment.
EXEC_MEMORY = {
    "mprotect_rwx": "0",
    "mmap_anonymous_rwx": "1",
    "write_then_mprotect_rx": "2",
    "pkey_mprotect_rwx": "3",
    "memfd_mapped_rx": "4",
    "shmat_exec": "5",
    "read_implies_exec_personality": "6",
}


@pytest.mark.parametrize("attack", sorted(EXEC_MEMORY))
async def test_memory_that_is_written_then_executed_is_refused(attack: str) -> None:
    """The syscall scan is off: the seccomp filter alone has to stop it (as it must for a
    kernel that reaches a libc gadget)."""
    r, work = await run_hostile("exec_memory", {"0 /* @JK_MODE@ */": EXEC_MEMORY[attack]})
    written = work / "cases" / SMALL_CASE / "output0.bin"
    ran = codes(work, 2) if written.exists() else None  # [0, 42]: the attack worked
    assert r.status is Status.SANDBOX_VIOLATION, (r.status, r.detail, ran)
    assert "seccomp" in r.cases[0].detail
    assert ran != [0, 42] and not written.exists()  # killed inside the call: nothing written


MPROTECT_RWX = r"""
#include <stdio.h>
#include <sys/mman.h>
static unsigned char page[4096] __attribute__((aligned(4096)));
int main(void) {
    int r = mprotect(page, sizeof page, PROT_READ | PROT_WRITE | PROT_EXEC);
    printf("mprotect returned %d\n", r);
    return r == 0 ? 0 : 3;
}
"""


async def test_mprotect_to_rwx_is_refused_under_callgrind_too() -> None:
    """valgrind runs the guest's mprotect for it; its own JIT needs anonymous RWX mmaps, which
    its filter allows, but no PROT_EXEC mprotect."""
    folder = fresh_dir("mprotect-rwx")
    (folder / "bin").mkdir(mode=0o755)
    (folder / "out").mkdir(mode=0o755)
    (folder / "prog.c").write_text(MPROTECT_RWX)
    gcc = ["gcc", "-O1", "-o", str(folder / "bin" / "prog"), str(folder / "prog.c")]
    await asyncio.to_thread(subprocess.run, gcc, check=True)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/sandbox/out/cg.out"]
    r = await run_sandboxed(
        [*argv, "/sandbox/bin/prog"],
        ro_binds={"bin": folder / "bin"},
        rw_dir=folder / "out",
        limits=SandboxLimits.valgrind(),
    )
    assert r.status is SandboxStatus.SANDBOX_VIOLATION, (r.status, r.stdout.text, r.stderr.text)
    assert "mprotect returned 0" not in r.stdout.text
    assert any("seccomp" in v for v in r.violations)


@pytest.mark.parametrize(
    ("variant", "mode", "needle"),
    [
        ("init_section", None, "section .init "),
        ("ifunc_resolver", None, "confusion_mul_grad is an IFUNC symbol"),
        ("renamed_init_array", None, "section .jk_tables is an init_array table"),
        ("constructor", None, "section .init_array"),
        ("destructor", None, "section .fini_array"),
        ("writable_code", "0", "section .jk_rwx is writable and executable"),
        ("writable_code", "1", "executable stack"),
        ("client_request", None, "valgrind client request"),
    ],
)
async def test_code_outside_main_or_the_scan_is_refused(
    variant: str, mode: str | None, needle: str
) -> None:
    replace = None if mode is None else {"0 /* @JK_MODE@ */": mode}
    r, work = await run_hostile(variant, replace, scan_syscalls=True)
    assert r.status is Status.STATIC_CHECK_FAILED, (r.status, r.detail)
    assert r.compile is not None
    assert any(needle in p for p in r.compile.problems), r.compile.problems
    assert r.cases == [] and not (work / "build" / "harness").exists()


def _kernel_sources() -> list[Path]:
    """Every kernel and tiling a team is shown or tests run as honest code."""
    roots = [REPO / "resources", REPO / "tests" / "fixtures" / "kernels"]
    roots.append(REPO / "tests" / "fixtures" / "specialised_kernel")
    found = [p for root in roots for p in root.rglob("*.c") if "harness" not in p.parts]
    return sorted(p for p in found if p.parent.name in ("op_kernel", "op_host"))


def test_honest_kernels_pass_the_byte_scan() -> None:
    """No false positive on the baseline, the playbook steps or the fixture kernels."""
    spec = load_operator().build
    include = load_operator().project_dir / "include"
    out = fresh_dir("honest-objects")
    sources = _kernel_sources()
    assert len(sources) >= 20
    for i, src in enumerate(sources):
        obj = out / f"{i}.o"
        argv = [spec.compiler, *spec.cflags, f"-I{include}", "-c", str(src), "-o", str(obj)]
        subprocess.run(argv, check=True, capture_output=True)
        assert object_problems(obj) == (), src


def test_the_argument_checked_syscalls_match_the_system_headers() -> None:
    headers = {
        "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        "aarch64": Path("/usr/include/asm-generic/unistd.h"),
    }
    present = {arch: h.read_text() for arch, h in headers.items() if h.exists()}
    if "x86_64" not in present:
        pytest.skip("no kernel headers installed")
    for column, arch in enumerate(headers):
        if arch not in present:
            continue
        for name, numbers in sandbox_seccomp.ARG_CHECKED_SYSCALLS.items():
            m = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)", present[arch])
            assert m is not None and int(m[1]) == numbers[column], (arch, name)
