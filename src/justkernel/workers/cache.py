"""The result cache: one receipt per job key, so an identical job never runs twice.

A job key hashes everything that decides an outcome (toolchain id and version, source tree,
input packs, job kind, case ids), so a stored receipt *is* the answer for that key. Only
deterministic outcomes are stored; the toolchain marks each receipt `cacheable`:

- stored: measured, probe_passed, incorrect, crashed, compile_failed, static_check_failed from
  object checks, sandbox_violation, resource_limit, and timeouts on the CPU-time limit (CPU
  time does not depend on how busy the machine is);
- never stored: wall-clock timeouts (load can cause them), tree-policy refusals (the key
  covers only the editable files, so a tampered harness must not poison the key of the clean
  tree), and infrastructure failures, which raise instead of producing a receipt at all.

Files are `<folder>/<job_key>.json`, written atomically (temp file, fsync, rename), so a
reader never sees half a receipt and concurrent writers of the same key are harmless.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from justkernel.core.receipts import Receipt
from justkernel.store.blobs import SHA256_RE


class ReceiptCache:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, job_key: str) -> Path:
        if not SHA256_RE.match(job_key):
            raise ValueError(f"not a job key: {job_key!r}")
        return self.folder / f"{job_key}.json"

    def get(self, job_key: str) -> Receipt | None:
        """The stored receipt marked `cache_hit`, or None (missing or unreadable)."""
        try:
            text = self.path(job_key).read_text()
            receipt = Receipt.model_validate_json(text)
        except (OSError, ValidationError):
            return None
        if receipt.job_key != job_key:
            return None
        return receipt.model_copy(update={"cache_hit": True})

    @staticmethod
    def accepts(receipt: Receipt) -> bool:
        return receipt.cacheable and not receipt.cache_hit

    def put(self, receipt: Receipt) -> bool:
        """Store a deterministic receipt; returns whether it was stored."""
        if not self.accepts(receipt):
            return False
        target = self.path(receipt.job_key)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".receipt-", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(receipt.model_dump_json(indent=1))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True

    def __contains__(self, job_key: str) -> bool:
        return self.path(job_key).is_file()
