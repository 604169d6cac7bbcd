"""Freezing a candidate from a source text, for tests of what the store decides at freeze time
(parents, events) without running a whole evaluation for its receipt."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from justkernel.core.records.candidates import Candidate
from justkernel.lab import Lab


@dataclass(frozen=True)
class ReceiptFields:
    """The receipt fields a candidate keeps (a real Receipt needs a whole evaluation)."""

    job_key: str
    source_sha256: str
    total_est_cycles: int | None
    status: str


async def freeze_text(
    lab: Lab,
    run_id: str,
    team: str,
    text: str,
    *,
    path: str = "op_kernel/kernel.cpp",
    cycles: int = 1000,
    fetched: tuple[str, ...] = (),
) -> Candidate:
    """Freeze `text` as the team's one kernel file, measured at `cycles`."""
    sha = hashlib.sha256(text.encode()).hexdigest()
    receipt = ReceiptFields(f"job-{sha[:16]}", sha, cycles, "measured")
    cand, _new = await lab.candidates.freeze(
        run_id, team, {path: text.encode()}, receipt, None, fetched
    )
    return cand
