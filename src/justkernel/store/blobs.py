"""Content-addressed blob store: files named by the SHA-256 of their bytes.

Candidate sources, logs and receipts referenced by events live here, so an export can carry
exactly the blobs its events name, and a blob can never silently change under its name.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
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
        # a temp name of its own per call: two writers of the same bytes (two teams adopting
        # one candidate, in one process) must not share, truncate or rename each other's file
        fd, tmp = tempfile.mkstemp(prefix=f"{digest}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, sha256: str) -> bytes:
        data = self.path(sha256).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"blob {sha256} is corrupt on disk")
        return data

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()
