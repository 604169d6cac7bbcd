"""`teams` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from justkernel.core.records.base import Record

# awaiting_approval: the team's turn ended in a tool call a person must approve (its model slot
# is free; a decision resumes the turn: `core.approvals`)
TeamStatus = Literal["idle", "running", "paused", "awaiting_approval", "done", "exited"]


@dataclass(frozen=True)
class Team(Record):
    PUBLIC: ClassVar = {"workspace": None}  # a host path: never shown

    run_id: str
    id: str
    number: int
    display_name: str
    model_preset: str
    status: TeamStatus
    status_reason: str | None
    workspace: Path
    created_at: str
    exited_at: str | None
    config: dict[str, Any] = field(default_factory=dict)
