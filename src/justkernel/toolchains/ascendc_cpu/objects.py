"""What the team's objects (host.o, kernel_<dt>.o) may contain and reference.

The byte scan and the pre-main checks are the CPU toolchain's (`cpu_objects`): no encoding that
enters the OS, no writable code, no executable stack, no IFUNC, and no init/fini tables in the
kernel objects. The host object may hold one `.init_array` entry per op: OP_ADD registers the
tiling function with a static object, as CANN's does (the harness finds it there); that code
runs before main, before the engine exists, so it cannot reach the cycle model.

Undefined symbols come from an allow-list: what the library's inline code and a C++17 kernel
need from libstdc++ and libm (memory, strings, exceptions, containers, math), and nothing that
opens files, writes to descriptors, ends the process, starts threads or loads code
(fopen, write, exit, _exit, system, dlopen, syscall, ptrace, pthread_create ...): a kernel that
could write run.json itself and exit would report any cycle count it liked.
"""

from __future__ import annotations

import re
from pathlib import Path

from justkernel.toolchains import elf_read
from justkernel.toolchains.cpu_objects import forbidden_encodings, run_outside_main
from justkernel.toolchains.elf_read import ElfError


def _words(text: str) -> list[str]:
    return text.split()


ALLOWED_EXACT = frozenset(
    _words(
        """
    memcpy memmove memset memcmp memchr strlen strcmp strncmp strchr strcpy strncpy
    __stack_chk_fail __dso_handle __cxa_begin_catch __cxa_end_catch __cxa_allocate_exception
    __cxa_free_exception __cxa_throw __cxa_rethrow __cxa_guard_acquire __cxa_guard_release
    __cxa_guard_abort __cxa_pure_virtual __cxa_deleted_virtual __gxx_personality_v0
    _Unwind_Resume snprintf vsnprintf __snprintf_chk __vsnprintf_chk __memcpy_chk __memmove_chk
    __memset_chk __strcpy_chk __strlen_chk strtod strtof strtol strtoul strtoll strtoull
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
    )
)


def symbol_allowed(name: str) -> bool:
    if name in ALLOWED_EXACT or name in ALLOWED_MATH:
        return True
    return any(p.match(name) for p in ALLOWED_PATTERNS)


def undefined_symbols(elf: elf_read.Elf) -> list[str]:
    return sorted({s.name for s in elf.symbols() if s.section == 0 and s.name})


def _init_tables_only(problem: str) -> bool:
    return "init_array table" in problem


def object_problems(obj: Path, *, host: bool, scan_bytes: bool = True) -> tuple[str, ...]:
    """Every problem with one team object; an unreadable file is a problem too."""
    try:
        elf = elf_read.read(obj)
    except (OSError, ElfError) as e:
        return (f"{obj.name}: cannot be read as an ELF object: {e}",)
    problems = list(run_outside_main(obj.name, elf))
    if host:  # OP_ADD's static registration (see the module docstring)
        problems = [p for p in problems if not _init_tables_only(p)]
    if scan_bytes:
        problems += forbidden_encodings(obj.name, elf)
    for name in undefined_symbols(elf):
        if not symbol_allowed(name):
            problems.append(
                f"{obj.name}: references {name}, which a kernel may not use "
                "(no files, process control, threads or system calls)"
            )
    return tuple(problems)
