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
import threading
from collections import OrderedDict
from pathlib import Path

from pydantic import ValidationError

from justkernel.core.receipts import Receipt
from justkernel.store.blobs import SHA256_RE

MEMO_SIZE = 512  # parsed receipts kept; a full one is ~150 KB as objects (~25 KB of JSON)


class ReceiptCache:
    """Receipts on disk, with the last `MEMO_SIZE` parsed ones kept per file version: teams
    that reach the same source all hold the one parsed receipt (shallow copies that differ
    only in `team`/`cache_hit`), not a parse each (100 teams held ~100 MB of equal copies).
    A receipt is never changed once made, so sharing its parts is safe."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._memo: OrderedDict[str, tuple[tuple[int, int, int], Receipt]] = OrderedDict()
        self._memo_lock = threading.Lock()  # get() may be called from worker threads

    def path(self, job_key: str) -> Path:
        if not SHA256_RE.match(job_key):
            raise ValueError(f"not a job key: {job_key!r}")
        return self.folder / f"{job_key}.json"

    def get(self, job_key: str) -> Receipt | None:
        """The stored receipt marked `cache_hit`, or None (missing or unreadable)."""
        path = self.path(job_key)
        try:
            st = path.stat()
            version = (st.st_ino, st.st_size, st.st_mtime_ns)  # a rewrite is a new version
            with self._memo_lock:
                known = self._memo.get(job_key)
                if known is not None and known[0] == version:
                    self._memo.move_to_end(job_key)
                    return known[1].model_copy()  # the caller's own top level
            receipt = Receipt.model_validate_json(path.read_text())
        except (OSError, ValidationError):
            return None
        if receipt.job_key != job_key:
            return None
        hit = receipt.model_copy(update={"cache_hit": True})
        with self._memo_lock:
            self._memo[job_key] = (version, hit)
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return hit.model_copy()

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
