"""Leases on remote jobs, and the book of receipts that arrived too late to count.

A remote job holds a lease while it runs; each heartbeat the host answers renews the leases of
its jobs. A lease that is not renewed within its time-to-live means the host stopped answering:
the executor gives the job back to the pool (re-queued once, elsewhere) and marks the host down.

The job may still finish there. When the host comes back its receipt is collected and kept in
`LateReceipts` as history (one JSON file each, `<folder>/<job_key>.<host>.<n>.json`): it never
enters the result cache and never resolves the job again, so nothing is counted twice.
Lease state lives in memory; a restarted lab has no remote jobs in flight to lease.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from justkernel.core.receipts import Receipt, utc_now
from justkernel.workers.job_files import write_atomic

log = logging.getLogger("justkernel.workers")


@dataclass
class Lease:
    job: str  # the job's folder name on the host
    host: str
    job_key: str
    ttl: float
    granted_at: float = field(default_factory=time.monotonic)
    renewed_at: float = field(default_factory=time.monotonic)
    renewals: int = 0

    def expired(self, now: float | None = None) -> bool:
        return (now if now is not None else time.monotonic()) - self.renewed_at > self.ttl


class LeaseTable:
    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}

    def grant(self, job: str, host: str, job_key: str, ttl: float) -> Lease:
        lease = Lease(job, host, job_key, ttl)
        self._leases[job] = lease
        return lease

    def renew_host(self, host: str) -> int:
        """A heartbeat from `host` renews all its leases; returns how many."""
        now = time.monotonic()
        count = 0
        for lease in self._leases.values():
            if lease.host == host:
                lease.renewed_at = now
                lease.renewals += 1
                count += 1
        return count

    def release(self, job: str) -> None:
        self._leases.pop(job, None)

    def held(self, host: str | None = None) -> list[Lease]:
        return [x for x in self._leases.values() if host is None or x.host == host]

    def expired(self, host: str | None = None) -> list[Lease]:
        now = time.monotonic()
        return [x for x in self.held(host) if x.expired(now)]


class LateReceipts:
    """Receipts of jobs that were given up on a host and finished there anyway."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.entries: list[dict[str, Any]] = []

    def record(self, receipt: Receipt, host: str, *, counted_elsewhere: bool) -> None:
        entry = {
            "host": host,
            "received_at": utc_now().isoformat(),
            "counted_elsewhere": counted_elsewhere,
            "receipt": receipt.model_dump(mode="json"),
        }
        self.entries.append(entry)
        log.warning(
            "late receipt for job %s from host %s kept as history (%s)",
            receipt.job_key[:12],
            host,
            "already completed elsewhere" if counted_elsewhere else "not counted",
        )
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        n = len(list(self.folder.glob(f"{receipt.job_key}.{host}.*.json")))
        write_atomic(self.folder / f"{receipt.job_key}.{host}.{n}.json", json.dumps(entry))
