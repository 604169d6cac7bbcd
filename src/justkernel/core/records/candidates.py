"""`candidates` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from justkernel.core.records.base import Record
from justkernel.core.statuses import CandidateStatus


@dataclass(frozen=True)
class Candidate(Record):
    PUBLIC: ClassVar = {"run_id": None, "id": "candidate_id", "team_id": "team"}

    run_id: str
    id: str
    team_id: str
    source_sha256: str
    archive_blob: str
    commit: str | None
    receipt_key: str
    cycles_sum: int | None
    local_passed: bool
    status: CandidateStatus
    review: dict[str, Any] | None
    created_at: str
    parent_id: str | None = None  # the candidate it was derived from (see store.lineage)
    parent_kind: str | None = None  # "own" or "adopted"
