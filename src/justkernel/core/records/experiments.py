"""`experiments` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from justkernel.core.records.base import Record


@dataclass(frozen=True)
class Experiment(Record):
    PUBLIC: ClassVar = {"run_id": None, "team_id": None}

    run_id: str
    team_id: str
    number: int
    plan: dict[str, Any]
    status: str
    commit: str | None
    tree_sha256: str | None
    receipt_key: str | None
    cycles_sum: int | None
    created_at: str
