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
Only the candidate's own code is scanned, in its objects and again as linked (relocations fill
in bytes the object holds as zeros): libc and the harness legitimately hold these bytes (the
harness's `main` contains `80 cd 80`, an `or $0x80, %ch`). Known limit: the harness's own
relocated fields also shift with the candidate's size; the seccomp filter is the boundary, this
scan a first filter.
"""

from __future__ import annotations

import re
from pathlib import Path

from justkernel.toolchains.cpu import elf_read
from justkernel.toolchains.cpu.elf_read import Elf, ElfError

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


def _hits(machine: int, data: bytes) -> dict[tuple[str, str], list[int]]:
    """Offsets in `data` (code of `machine`) of each forbidden encoding, by (what, why not)."""
    found: dict[tuple[str, str], list[int]] = {}
    if machine == elf_read.EM_X86_64:
        for m in _X86_64_RE.finditer(data):
            found.setdefault(_X86_64[m.group(1)], []).append(m.start())
    elif machine == elf_read.EM_AARCH64:
        for off in range(0, len(data) - 3, 4):
            if int.from_bytes(data[off : off + 4], "little") & _SVC_MASK == _SVC:
                found.setdefault(("an `svc` instruction", _OS), []).append(off)
    return found


def _describe(where: str, hits: dict[tuple[str, str], list[int]], shift: int = 0) -> list[str]:
    out = []
    for (what, why), offsets in hits.items():
        more = f" (and {len(offsets) - 1} more)" if len(offsets) > 1 else ""
        out.append(
            f"{where} holds the bytes of {what} at offset {offsets[0] - shift:#x}{more}; {why}"
        )
    return out


def forbidden_encodings(name: str, elf: Elf) -> tuple[str, ...]:
    """Problems for forbidden encodings anywhere in the executable sections of `elf`."""
    problems = []
    for section in (s for s in elf.sections if s.executable):
        hits = _hits(elf.machine, elf.contents(section))
        problems += _describe(f"{name}: section {section.name}", hits)
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


# GNU ld map (-Wl,-Map): input sections after this line, as " name 0xaddr 0xsize file" on one
# line or, for a long name, the name alone and the rest on the next line.
_MAP_START = "Linker script and memory map"
_ONE_LINE = re.compile(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")
_NAME_ONLY = re.compile(r"^ (\S+)$")
_REST = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")


def input_sections(link_map: str, objects: set[str]) -> list[tuple[str, str, int, int]]:
    """(object, section, address, size) of every input section the linker placed from one of
    `objects` (matched by file name)."""
    found = []
    _, _, placed = link_map.partition(_MAP_START)
    pending: str | None = None
    for line in placed.splitlines():
        one, rest = _ONE_LINE.match(line), _REST.match(line)
        if one:
            name, addr, size, path = one.groups()
        elif rest and pending is not None:
            name, (addr, size, path) = pending, rest.groups()
        else:
            named = _NAME_ONLY.match(line)
            pending = named.group(1) if named else None
            continue
        pending = None
        if Path(path).name in objects and int(size, 16):
            found.append((Path(path).name, name, int(addr, 16), int(size, 16)))
    return found


def linked_encodings(exe: Path, link_map: Path, objects: tuple[Path, ...]) -> tuple[str, ...]:
    """Problems for forbidden encodings in the candidate's code as linked.

    The object scan sees zeros where relocations go; the linker writes displacements there,
    and an addend chosen for the (deterministic) final layout can spell `syscall` in them.
    So the candidate's own loaded input sections are scanned again in the executable's code
    segments, with one byte of context on each side (a pattern across the boundary); the
    harness's own bytes are left alone.
    """
    try:
        elf = elf_read.read(exe)
        loaded = {
            o.name: {s.name for s in elf_read.read(o).sections if s.allocated} for o in objects
        }
        placed = input_sections(link_map.read_text(errors="replace"), set(loaded))
    except (OSError, ElfError) as e:
        return (f"{exe.name}: cannot check the linked code: {e}",)
    code = [g for g in elf.segments if g.type == elf_read.PT_LOAD and g.flags & elf_read.PF_X]
    context = 1 if elf.machine == elf_read.EM_X86_64 else 0
    problems: list[str] = []
    for obj, section, addr, size in placed:
        for seg in code if section in loaded[obj] else ():
            off = seg.file_range(addr, size)
            if off is None:
                continue
            lo = max(seg.offset, off - context)
            hi = min(seg.offset + seg.filesz, off + size + context)
            hits = _hits(elf.machine, elf.data[lo:hi])
            problems += _describe(f"{obj}: section {section}, as linked,", hits, off - lo)
    return tuple(problems)
