"""Just enough of ELF64 (little-endian) to check a candidate's objects: sections, segments and
symbols, with every offset bounds-checked.

Hand-written because the checks need raw bytes and flags that `objdump`/`readelf` output only
paraphrases (a linear disassembly shows instruction boundaries, not every byte), and pyelftools
is not a dependency. The object comes from gcc run on untrusted source, so a malformed file
raises `ElfError` instead of being trusted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHT_SYMTAB = 2
SHT_NOBITS = 8
SHT_INIT_ARRAY = 14
SHT_FINI_ARRAY = 15
SHT_PREINIT_ARRAY = 16
PT_LOAD = 1
PT_GNU_STACK = 0x6474E551
PF_X = 0x1
PF_W = 0x2
STT_GNU_IFUNC = 10
EM_X86_64 = 62
EM_AARCH64 = 183

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_PHDR = struct.Struct("<IIQQQQQQ")
_SYM = struct.Struct("<IBBHQQ")
_SHN_XINDEX = 0xFFFF


class ElfError(ValueError):
    """The file is not a well-formed ELF64 little-endian file."""


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int

    @property
    def executable(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)

    @property
    def allocated(self) -> bool:
        """Loaded into memory (code, data), unlike comments, notes or debug info."""
        return bool(self.flags & SHF_ALLOC)


@dataclass(frozen=True)
class Segment:
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int

    def file_range(self, addr: int, size: int) -> int | None:
        """File offset of [addr, addr+size) if this segment's file image holds all of it."""
        if self.vaddr <= addr and addr + size <= self.vaddr + self.filesz:
            return self.offset + addr - self.vaddr
        return None


@dataclass(frozen=True)
class Symbol:
    name: str
    type: int
    section: int


@dataclass(frozen=True)
class Elf:
    machine: int
    data: bytes
    sections: tuple[Section, ...]
    segments: tuple[Segment, ...]

    def bytes_of(self, offset: int, size: int) -> bytes:
        """File bytes [offset, offset+size), refusing ranges outside the file."""
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise ElfError(f"range {offset:#x}+{size:#x} lies outside the file")
        return self.data[offset : offset + size]

    def contents(self, section: Section) -> bytes:
        if section.type == SHT_NOBITS:
            return b""
        return self.bytes_of(section.offset, section.size)

    def symbols(self) -> list[Symbol]:
        """Every entry of every SHT_SYMTAB section (an object has one)."""
        out = []
        for table in (s for s in self.sections if s.type == SHT_SYMTAB):
            raw = self.contents(table)
            strings = self._strtab(table.link)
            for i in range(0, len(raw) - len(raw) % _SYM.size, _SYM.size):
                name, info, _other, shndx, _value, _size = _SYM.unpack_from(raw, i)
                out.append(Symbol(_cstr(strings, name), info & 0xF, shndx))
        return out

    def _strtab(self, index: int) -> bytes:
        if not 0 <= index < len(self.sections):
            raise ElfError(f"string table index {index} out of range")
        return self.contents(self.sections[index])


def _cstr(table: bytes, offset: int) -> str:
    if not 0 <= offset < max(len(table), 1):
        raise ElfError(f"name offset {offset:#x} outside its string table")
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)].decode("utf-8", "replace")


def parse(data: bytes) -> Elf:
    """Sections (with names), segments and machine of an ELF64 LE file; ElfError otherwise."""
    if len(data) < _EHDR.size or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not an ELF64 little-endian file")
    (_, _, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx) = (
        _EHDR.unpack_from(data)
    )
    try:
        first = _SHDR.unpack_from(data, shoff) if shoff else None
        if first is not None and shnum == 0:
            shnum = first[5]  # more than 0xff00 sections: the count sits in section 0
        if first is not None and shstrndx == _SHN_XINDEX:
            shstrndx = first[6]
        if (shnum and shentsize != _SHDR.size) or (phnum and phentsize != _PHDR.size):
            raise ElfError("unexpected header entry size")
        headers = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
        phdrs = [_PHDR.unpack_from(data, phoff + i * _PHDR.size) for i in range(phnum)]
    except struct.error as e:
        raise ElfError(f"truncated headers: {e}") from None
    segments = tuple(Segment(p[0], p[1], p[2], p[3], p[5]) for p in phdrs)
    raw = [Section("", h[1], h[2], h[4], h[5], h[6]) for h in headers]
    elf = Elf(machine, data, tuple(raw), segments)
    if not headers:
        return elf
    names = elf._strtab(shstrndx)
    sections = tuple(
        Section(_cstr(names, h[0]), s.type, s.flags, s.offset, s.size, s.link)
        for h, s in zip(headers, raw, strict=True)
    )
    return Elf(machine, data, sections, segments)


def read(path: Path) -> Elf:
    return parse(Path(path).read_bytes())
