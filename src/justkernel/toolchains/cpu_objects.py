"""What a candidate's object code may contain, checked on its bytes and ELF headers.

Why bytes and not a disassembly: x86 instructions have no alignment, so `movl $0xc3050f, %eax`
holds `syscall; ret` one byte in, and a linear disassembly only ever shows the `mov`. Every
byte offset of every executable section is searched for the encodings that enter the OS
(`syscall` 0f 05, `sysenter` 0f 34, `int $0x80` cd 80; aarch64 `svc`), and for valgrind's
client-request preamble, with which a kernel could switch callgrind's counting off.

Why the headers: code in `.init`/`.fini`, the `*_array`/`.ctors`/`.dtors` tables (checked by
name in `operators.static_check`, by type here) and IFUNC resolvers runs before `main` or after
it: outside every check the harness makes and outside callgrind's toggle. A writable
executable section or an executable stack would let a kernel write code the scan never saw.
Only the candidate's own objects are scanned: libc and the harness legitimately hold these
bytes (the harness's `main` contains `80 cd 80`, an `or $0x80, %ch`).
"""

from __future__ import annotations

import re
from pathlib import Path

from justkernel.toolchains import elf_read
from justkernel.toolchains.elf_read import Elf, ElfError, Section

_OS = "a kernel never enters the OS itself, not even from inside a constant"
_VALGRIND = "a kernel may not steer the simulator that measures it"
# x86_64 byte sequences, what they are and why not; searched at every offset, overlaps included.
_X86_64 = {
    b"\x0f\x05": ("a `syscall` instruction (0f 05)", _OS),
    b"\x0f\x34": ("a `sysenter` instruction (0f 34)", _OS),
    b"\xcd\x80": ("an `int $0x80` instruction (cd 80)", _OS),
    # rol $3,%rdi; rol $13,%rdi; rol $61,%rdi; rol $51,%rdi (valgrind.h, amd64)
    bytes.fromhex("48c1c70348c1c70d48c1c73d48c1c733"): ("a valgrind client request", _VALGRIND),
}
_X86_64_RE = re.compile(b"(?=(" + b"|".join(re.escape(p) for p in _X86_64) + b"))", re.DOTALL)
_SVC_MASK, _SVC = 0xFFE0001F, 0xD4000001  # aarch64 `svc #imm16`, 4-byte aligned words
_TABLE_TYPES = {
    elf_read.SHT_INIT_ARRAY: "an init_array table",
    elf_read.SHT_FINI_ARRAY: "a fini_array table",
    elf_read.SHT_PREINIT_ARRAY: "a preinit_array table",
}


def _hits(elf: Elf, section: Section) -> dict[tuple[str, str], list[int]]:
    """Offsets in `section` of each forbidden encoding, by (what it is, why not)."""
    data = elf.contents(section)
    found: dict[tuple[str, str], list[int]] = {}
    if elf.machine == elf_read.EM_X86_64:
        for m in _X86_64_RE.finditer(data):
            found.setdefault(_X86_64[m.group(1)], []).append(m.start())
    elif elf.machine == elf_read.EM_AARCH64:
        for off in range(0, len(data) - 3, 4):
            if int.from_bytes(data[off : off + 4], "little") & _SVC_MASK == _SVC:
                found.setdefault(("an `svc` instruction", _OS), []).append(off)
    return found


def forbidden_encodings(name: str, elf: Elf) -> tuple[str, ...]:
    """Problems for forbidden encodings anywhere in the executable sections of `elf`."""
    problems = []
    for section in (s for s in elf.sections if s.executable):
        for (what, why), offsets in _hits(elf, section).items():
            more = f" (and {len(offsets) - 1} more)" if len(offsets) > 1 else ""
            problems.append(
                f"{name}: section {section.name} holds the bytes of {what} at offset "
                f"{offsets[0]:#x}{more}; {why}"
            )
    return tuple(problems)


def run_outside_main(name: str, elf: Elf) -> tuple[str, ...]:
    """Problems for code that would run before or after the harness's `main`, or for memory
    that is both writable and executable."""
    problems = []
    notes = [s for s in elf.sections if s.name == ".note.GNU-stack"]
    for s in elf.sections:
        if s.type in _TABLE_TYPES:
            problems.append(
                f"{name}: section {s.name} is {_TABLE_TYPES[s.type]} (code that runs "
                "before or after main)"
            )
        if s.executable and s.flags & elf_read.SHF_WRITE:
            problems.append(f"{name}: section {s.name} is writable and executable")
    if not notes:
        problems.append(
            f"{name}: no .note.GNU-stack section (the linker would make the stack executable)"
        )
    elif any(s.executable for s in notes):
        problems.append(f"{name}: asks for an executable stack (.note.GNU-stack is executable)")
    for sym in elf.symbols():
        if sym.type == elf_read.STT_GNU_IFUNC:
            problems.append(
                f"{name}: {sym.name} is an IFUNC symbol (its resolver runs before main)"
            )
    return tuple(problems)


def object_problems(obj: Path, scan_bytes: bool = True) -> tuple[str, ...]:
    """Every problem with one candidate object; an unreadable file is a problem too."""
    try:
        elf = elf_read.read(obj)
        found = run_outside_main(obj.name, elf)
        return found + (forbidden_encodings(obj.name, elf) if scan_bytes else ())
    except (OSError, ElfError) as e:
        return (f"{obj.name}: cannot be read as an ELF object: {e}",)


def executable_problems(exe: Path) -> tuple[str, ...]:
    """Problems with the linked harness: a writable+executable segment or an executable stack
    (either hands the kernel memory where it can write code)."""
    try:
        elf = elf_read.read(exe)
    except (OSError, ElfError) as e:
        return (f"{exe.name}: cannot be read as an ELF executable: {e}",)
    problems = []
    for seg in elf.segments:
        if seg.type == elf_read.PT_LOAD and seg.flags & elf_read.PF_X and seg.flags & elf_read.PF_W:
            problems.append(f"{exe.name}: has a writable and executable segment")
        if seg.type == elf_read.PT_GNU_STACK and seg.flags & elf_read.PF_X:
            problems.append(f"{exe.name}: has an executable stack")
    if not any(seg.type == elf_read.PT_GNU_STACK for seg in elf.segments):
        problems.append(f"{exe.name}: has no PT_GNU_STACK header (the stack would be executable)")
    return tuple(problems)
