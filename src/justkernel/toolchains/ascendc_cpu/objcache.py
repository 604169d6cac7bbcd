"""Compiled team objects, kept per compile unit so a candidate that changes only its kernel
does not compile its host tiling again (and the f32 and f16 kernels are reused apart).

g++ output is deterministic for the same inputs and flags, so a unit is keyed by the toolchain
version (which covers the compiler, flags, headers and target), the unit's command line and
the bytes of every team file the unit may read: op_host/** for the host, op_host/** and
op_kernel/** for a kernel. A unit whose preprocessed text names a team file outside that
scope (an `#include "../elsewhere"`) is never stored, so its key could not miss a change.

The cache holds the object and its preprocessed unit (.ii), and a hit copies both into the
step's folder: everything after the compile (the preprocessed-line scan, the object checks,
the link) runs on the copy exactly as on a fresh compile, and the sandbox never sees the cache.
Entries are written to a scratch folder and renamed into place, so readers never see half one.
The .ii is kept gzip-compressed (a kernel's is ~1.3 MB of text, ~170 KB packed) and the cache
keeps the MAX_ENTRIES most recently used units (a hit touches its entry), so a long contest does
not fill the disk: about 0.4 MB a unit.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import posixpath
import re
import shutil
import tempfile
import zlib
from pathlib import Path

# team folders each unit may read; a kernel includes the host's tiling header
SCOPES = {"host": ("op_host",), "kernel": ("op_host", "op_kernel")}
SRC_MOUNT = "/sandbox/src/"
# absolute include paths that are not team files (the library and precompiled-header mounts,
# the system headers)
_TRUSTED = (
    "/sandbox/lib/include/",
    "/sandbox/pch/",
    "/usr/include/",
    "/usr/lib/gcc/",
    "/usr/local/include/",
)
MAX_ENTRIES = 400
_MARKER = re.compile(r'^# \d+ "([^"]*)"', re.MULTILINE)


def scope_of(step: str) -> tuple[str, ...]:
    return SCOPES["host" if step == "host" else "kernel"]


def unit_key(version: str, argv: tuple[str, ...], src: Path, scope: tuple[str, ...]) -> str:
    """sha256 over the toolchain version, the command line and each scoped file's path and
    bytes."""
    h = hashlib.sha256()
    for part in (version, *argv):
        h.update(part.encode() + b"\0")
    for top in scope:
        root = src / top
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
        for path in files:
            data = path.read_bytes()
            rel = path.relative_to(src).as_posix().encode()
            h.update(b"F" + rel + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def reads_only(ii_text: str, scope: tuple[str, ...]) -> bool:
    """Whether every file the preprocessed unit names is a trusted header or a team file
    inside `scope` (the condition for the unit's key to cover all it read)."""
    for name in set(_MARKER.findall(ii_text)):
        if name.startswith("<"):  # <built-in>, <command-line>
            continue
        if name.startswith(SRC_MOUNT):
            name = name[len(SRC_MOUNT) :]
        norm = posixpath.normpath(name)
        if norm.startswith("/"):
            if not norm.startswith(_TRUSTED):
                return False
            continue
        if norm.startswith("..") or norm.split("/", 1)[0] not in scope:
            return False
    return True


class ObjectCache:
    """`<folder>/<key>/{object, .ii}`; `folder` is per toolchain version."""

    def __init__(self, folder: Path, version: str) -> None:
        self.folder = folder
        self.version = version

    def key(self, step: str, argv: tuple[str, ...], src: Path) -> str:
        return unit_key(self.version, argv, src, scope_of(step))

    def fetch(self, key: str, dest: Path, output: str, preprocessed: str) -> bool:
        """Copy a stored unit into `dest` (the step's folder); False when there is none."""
        entry = self.folder / key
        try:
            packed = (entry / f"{preprocessed}.gz").read_bytes()
            obj = (entry / output).read_bytes()
            text = gzip.decompress(packed)
        except (OSError, EOFError, zlib.error):  # none, or evicted under our feet
            return False
        os.makedirs(dest, mode=0o755, exist_ok=True)
        os.chmod(dest, 0o755)
        (dest / output).write_bytes(obj)
        (dest / preprocessed).write_bytes(text)
        with contextlib.suppress(OSError):
            os.utime(entry)  # most recently used
        return True

    def store(self, key: str, step_dir: Path, output: str, preprocessed: str) -> bool:
        """Keep a freshly compiled unit (atomically); False when it may not be cached."""
        entry = self.folder / key
        if entry.is_dir():
            return True
        obj, ii = step_dir / output, step_dir / preprocessed
        if not (obj.is_file() and ii.is_file()):
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".unit-", dir=self.folder))
        try:
            shutil.copyfile(obj, scratch / output)
            packed = gzip.compress(ii.read_bytes(), compresslevel=6, mtime=0)
            (scratch / f"{preprocessed}.gz").write_bytes(packed)
            os.chmod(scratch, 0o755)
            try:
                os.rename(scratch, entry)
            except OSError:  # a concurrent job stored the same unit first
                return entry.is_dir()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        self.evict()
        return True

    def evict(self, keep: int = MAX_ENTRIES) -> None:
        """Drop the least recently used entries beyond `keep`."""
        entries = []
        for path in self.folder.iterdir():
            if path.name.startswith("."):
                continue
            try:
                entries.append((path.stat().st_mtime, path))
            except OSError:
                continue
        entries.sort(reverse=True)
        for _, path in entries[keep:]:
            shutil.rmtree(path, ignore_errors=True)
