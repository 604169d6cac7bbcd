"""What the team's objects (host.o, kernel_<dt>.o) may contain and reference.

The byte scan and the pre-main checks are the CPU toolchain's (`cpu_objects`): no encoding that
enters the OS, no writable code, no executable stack, no IFUNC, and no init/fini tables: no
team code runs before the harness's main or after it. (OP_ADD needs none: the library's
registers the op as two extern "C" functions the harness calls.)

Undefined symbols come from an allow-list: what the library's inline code and a C++17 kernel
need from libstdc++ and libm (memory, strings, exceptions, containers, math), and nothing that
opens files, writes to descriptors, ends the process, starts threads or loads code
(fopen, write, exit, _exit, system, dlopen, syscall, ptrace, pthread_create ...): a kernel that
could write run.json itself and exit would report any cycle count it liked.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from justkernel.toolchains.cpu import elf_read
from justkernel.toolchains.cpu.elf_read import Elf, ElfError
from justkernel.toolchains.cpu.objects import _describe, _hits, input_sections, run_outside_main


def _words(text: str) -> list[str]:
    return text.split()


# Team objects are compiled with -DJK_ENGINE_EXTERN: the engine's non-template functions live in
# the trusted harness object, so the library's inline code needs little beyond std::string and
# the exception machinery (no calloc, memchr or snprintf any more: those are the engine's).
ALLOWED_EXACT = frozenset(
    _words(
        """
    memcpy memmove memset memcmp strlen strcmp strncmp strchr strcpy strncpy
    malloc realloc free aligned_alloc posix_memalign
    __stack_chk_fail __dso_handle __cxa_begin_catch __cxa_end_catch __cxa_allocate_exception
    __cxa_free_exception __cxa_throw __cxa_rethrow __cxa_guard_acquire __cxa_guard_release
    __cxa_guard_abort __cxa_pure_virtual __cxa_deleted_virtual __gxx_personality_v0
    _Unwind_Resume __memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strlen_chk
    strtod strtof strtol strtoul strtoll strtoull
    __isoc23_strtol __isoc23_strtoul __isoc23_strtoll __isoc23_strtoull
    """
    )
)
_MATH = (
    "sqrt exp exp2 expm1 log log2 log10 log1p pow fabs floor ceil round trunc rint nearbyint "
    "lrint llrint lround llround fmod remainder fma fmin fmax frexp ldexp modf copysign "
    "nextafter hypot sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh erf "
    "erfc tgamma lgamma cbrt ilogb logb scalbn"
)
ALLOWED_MATH = frozenset(m + suffix for m in _words(_MATH) for suffix in ("", "f", "l"))
# Mangled C++ runtime names: operator new/delete, std::string, the std exceptions and their
# type info, the throw helpers, red-black tree and hash table helpers, std::terminate.
ALLOWED_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"^_Z(nw|na|dl|da)[a-zA-Z0-9_]*$",
        r"^__(extend|trunc)[a-z]{2}[a-z]{2}2$",  # libgcc float <-> half conversions
        r"^_ZN(K)?St7__cxx1112basic_string",
        r"^_ZSt\d+__throw_\w+$",
        r"^_ZSt\d+_Rb_tree_\w+$",
        r"^_ZN(K)?St8__detail\d+_(Prime_rehash_policy|Hash_node_base)\w*$",
        r"^_ZT[IVS]St\d+(exception|bad_alloc|bad_array_new_length|logic_error|runtime_error|"
        r"out_of_range|invalid_argument|length_error|overflow_error|range_error|domain_error|"
        r"underflow_error|bad_cast|bad_function_call)\w*$",
        r"^_ZN(K)?St\d+(exception|bad_alloc|logic_error|runtime_error|out_of_range|"
        r"invalid_argument|length_error|overflow_error|range_error|domain_error)\w*$",
        r"^_ZT[IVS]N10__cxxabiv1\d+__\w+$",
        r"^_ZSt9terminatev$",
        r"^_ZSt(15|17)__glibcxx_assert_failPKciS0_S0_$",
        r"^_ZSt21__glibcxx_assert_fail\w*$",
        # The library's compiled functions (JK_ENGINE_FN), defined once in the harness object:
        # jk::Engine members, jk::rep helpers, jk::misuse, AscendC::jk_detail helpers, and the
        # type-erased instruction bodies (jk::ops: vector ops, Cast, reductions, DataCopy, tensor
        # accessors; a function name always has parameter types after its `E`). Team source
        # cannot name `jk` (source_check), so only the library's headers refer to them; data
        # such as jk::g_engine stays refused.
        r"^_ZNK?2jk6Engine\d+\w+E\w*$",
        r"^_ZN2jk3rep\d+\w+E\w*$",
        r"^_ZN2jk6misuseE\w+$",
        r"^_ZN7AscendC9jk_detail\d+\w+E\w*$",
        r"^_ZN2jk3ops\d+\w+E\w+$",
    )
)


def symbol_allowed(name: str) -> bool:
    if name in ALLOWED_EXACT or name in ALLOWED_MATH:
        return True
    return any(p.match(name) for p in ALLOWED_PATTERNS)


def undefined_symbols(elf: elf_read.Elf) -> list[str]:
    return sorted({s.name for s in elf.symbols() if s.section == 0 and s.name})


# -- the byte scan, minus compiler layout ------------------------------------------------------
# C++ kernels are large: a `jae` 1295 bytes ahead is `0f 83 0f 05 00 00`, `mov %ecx,%ebp`
# before `cmpb $0,...(%rdi)` is `89 cd 80 ...`, and as linked `lea 0x340f(%rip),%rax` holds
# `0f 34`: the CPU toolchain's every-offset scan refuses the baseline itself. In a linear
# disassembly a hit is let through when it lies wholly inside the displacement of a relative
# jump or call or of a %rip-relative operand (no immediate), or when it spans two instructions
# and the first has no immediate or displacement (its tail is an opcode or ModRM byte the
# compiler chose). Every other hit refuses the object: a real `syscall`, and the hidden
# forms, an immediate (`movl $0xc3050f,%eax`) or displacement holding the bytes, or an
# immediate tail followed by a chosen opcode.
_INSN = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(\S*)\s*(.*)$")
_REL_BRANCH = re.compile(r"^(j[a-z]+|call|jmp)q?$")
_CHOSEN = re.compile(r"\$|0x[0-9a-f]+|\b\d+\(")  # an immediate or a displacement operand


def _instructions(
    path: Path, start: int, stop: int, section: str | None
) -> list[tuple[int, int, str, str]]:
    """(address, length, mnemonic, operands) from objdump, for [start, stop) of `section`
    (objects) or of the address space (executables)."""
    argv = ["objdump", "-d", "-w", f"--start-address={start:#x}", f"--stop-address={stop:#x}"]
    if section is not None:
        argv.append(f"--section={section}")
    done = subprocess.run([*argv, str(path)], capture_output=True, text=True, check=False)
    out = []
    for line in done.stdout.splitlines():
        m = _INSN.match(line)
        if m:
            out.append((int(m.group(1), 16), len(m.group(2).split()), m.group(3), m.group(4)))
    return out


def _layout(insns: list[tuple[int, int, str, str]], at: int, size: int) -> bool:
    """Whether the hit at [at, at+size) is compiler layout (see above)."""
    for i, (addr, length, mnemonic, operands) in enumerate(insns):
        end = addr + length
        if not addr <= at < end:
            continue
        target = operands.split("#")[0].split("<")[0]  # objdump's comments are not operands
        if at + size <= end:  # inside one instruction: a branch or %rip-relative displacement
            relative = bool(_REL_BRANCH.match(mnemonic)) or (
                "(%rip)" in target and "$" not in target
            )
            return at > addr and relative
        spans_next = i + 1 < len(insns) and insns[i + 1][0] == end
        return spans_next and not _CHOSEN.search(target)
    return False


def _real_hits(
    path: Path,
    elf: Elf,
    data: bytes,
    base: int,
    section: str | None,
    code_start: int | None = None,
) -> dict[tuple[str, str], list[int]]:
    """The forbidden encodings in `data` (loaded at `base`) that are not compiler layout.
    The disassembly starts at `code_start` (default `base`), an instruction boundary: a
    context byte before the section is never decoded as the start of an instruction."""
    hits = _hits(elf.machine, data)
    if not hits or elf.machine != elf_read.EM_X86_64:
        return hits
    start = base if code_start is None else code_start
    insns = _instructions(path, start, base + len(data), section)
    kept: dict[tuple[str, str], list[int]] = {}
    for key, offsets in hits.items():
        size = 16 if "valgrind" in key[0] else 2  # the client request; the 2-byte instructions
        for off in offsets:
            if not _layout(insns, base + off, size):
                kept.setdefault(key, []).append(off)
    return kept


def forbidden_code(path: Path, elf: Elf) -> tuple[str, ...]:
    problems: list[str] = []
    for section in (s for s in elf.sections if s.executable):
        hits = _real_hits(path, elf, elf.contents(section), 0, section.name)
        problems += _describe(f"{path.name}: section {section.name}", hits)
    return tuple(problems)


def linked_code(exe: Path, link_map: Path, user: dict[str, Path]) -> tuple[str, ...]:
    """The team's loaded input sections scanned again as linked (relocations filled in), with
    the same branch-layout rule. `user`: file name in the link map -> the object."""
    try:
        elf = elf_read.read(exe)
        loaded = {
            name: {s.name for s in elf_read.read(o).sections if s.allocated}
            for name, o in user.items()
        }
        placed = input_sections(link_map.read_text(errors="replace"), set(user))
    except (OSError, ElfError) as e:
        return (f"{exe.name}: cannot check the linked code: {e}",)
    code = [g for g in elf.segments if g.type == elf_read.PT_LOAD and g.flags & elf_read.PF_X]
    problems: list[str] = []
    for obj, section, addr, size in placed:
        for seg in code if section in loaded[obj] else ():
            off = seg.file_range(addr, size)
            if off is None:
                continue
            lo, hi = max(seg.offset, off - 1), min(seg.offset + seg.filesz, off + size + 1)
            hits = _real_hits(exe, elf, elf.data[lo:hi], addr - (off - lo), None, addr)
            problems += _describe(f"{obj}: section {section}, as linked,", hits, off - lo)
    return tuple(problems)


def object_problems(obj: Path, *, scan_bytes: bool = True) -> tuple[str, ...]:
    """Every problem with one team object; an unreadable file is a problem too."""
    try:
        elf = elf_read.read(obj)
    except (OSError, ElfError) as e:
        return (f"{obj.name}: cannot be read as an ELF object: {e}",)
    problems = list(run_outside_main(obj.name, elf))
    if scan_bytes:
        problems += forbidden_code(obj, elf)
    for name in undefined_symbols(elf):
        if not symbol_allowed(name):
            problems.append(
                f"{obj.name}: references {name}, which a kernel may not use "
                "(no files, process control, threads or system calls)"
            )
    return tuple(problems)
