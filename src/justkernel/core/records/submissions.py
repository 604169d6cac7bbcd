"""`submissions` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from justkernel.core.records.base import Record
from justkernel.core.statuses import SubmissionStatus


@dataclass(frozen=True)
class Submission(Record):
    """One row: while `submitting`, `id` is the lab's placeholder; once the judge answered,
    the judge's own submission id."""

    PUBLIC: ClassVar = {"run_id": None, "idempotency_key": None}

    id: str
    run_id: str
    candidate_id: str
    team_id: str
    source_sha256: str
    backend: str
    day: str
    status: SubmissionStatus
    result: dict[str, Any] | None
    submitted_at: str
    finished_at: str | None = None
    # None only for rows reserved before keys were stored: those cannot be re-sent safely
    idempotency_key: str | None = None
