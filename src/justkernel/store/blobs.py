"""Content-addressed blob store: files named by the SHA-256 of their bytes.

Candidate sources, logs and receipts referenced by events live here, so an export can carry
exactly the blobs its events name, and a blob can never silently change under its name.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class BlobStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, sha256: str) -> Path:
        if not SHA256_RE.match(sha256):
            raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
        return self.folder / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store bytes (idempotent) and return their SHA-256."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if target.exists():
            return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{digest}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
        return digest

    def get(self, sha256: str) -> bytes:
        data = self.path(sha256).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"blob {sha256} is corrupt on disk")
        return data

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()
