"""Where a secret may hide in a file the lab writes: in its bytes, or in a zip member's plaintext.

A bundle is a deflated zip: a secret inside a member does not appear in the file's bytes, so a
grep over `read_bytes()` cannot fail. These read every member, decompressed, and its name.
"""

from __future__ import annotations

import zipfile
from pathlib import Path


def zip_members_containing(path: Path, needle: bytes) -> list[str]:
    """Names of the members of the zip at `path` whose name or plaintext contains `needle`."""
    found = []
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            with archive.open(info) as member:
                if needle in info.filename.encode() or _stream_contains(member, needle):
                    found.append(info.filename)
    return found


def _stream_contains(stream: zipfile.ZipExtFile, needle: bytes, chunk: int = 1 << 20) -> bool:
    """Search a member chunk by chunk (a bundle's blobs can be large), across chunk borders."""
    tail = b""
    while block := stream.read(chunk):
        if needle in tail + block:
            return True
        tail = (tail + block)[-(len(needle) - 1) :] if len(needle) > 1 else b""
    return False


def files_containing(folder: Path, needle: bytes) -> list[Path]:
    """Files under `folder` holding `needle`: in their bytes, or inside them if they are zips."""
    return [path for path in sorted(folder.rglob("*")) if path.is_file() and _holds(path, needle)]


def _holds(path: Path, needle: bytes) -> bool:
    if needle in path.read_bytes():
        return True
    return zipfile.is_zipfile(path) and bool(zip_members_containing(path, needle))
