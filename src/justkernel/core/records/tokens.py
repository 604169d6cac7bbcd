"""`tokens` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass

from justkernel.core.records.base import Record


@dataclass(frozen=True)
class TeamIdentity(Record):
    """Who a request speaks for: one team of one run."""

    run_id: str
    team_id: str

    @property
    def owner(self) -> str:
        """The A2A task owner: tasks are scoped to this string."""
        return f"{self.run_id}/{self.team_id}"
