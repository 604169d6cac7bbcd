"""`runs` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from justkernel.core.records.base import Record

RunMode = Literal["live", "replay", "demo"]


@dataclass(frozen=True)
class Run(Record):
    id: str
    name: str
    mode: RunMode
    read_only: bool
    created_at: str
    last_seq: int
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "provenance": provenance(self)}


def imported_provenance(claims_simulated: bool) -> str:
    """How an imported run is labelled: a bundle's claim is shown as a claim."""
    return f"imported, claims {'' if claims_simulated else 'not '}simulated"


def provenance(run: Run) -> str:
    """Where a run's data came from, for the dashboard, reports and exports: the demo, an
    imported bundle (never this lab's own run, whatever its manifest said), or this lab."""
    if run.mode == "demo":
        return "demo (simulated)"
    if run.meta.get("imported") is True or run.mode == "replay":
        return imported_provenance(run.meta.get("simulated") is True)
    return "this lab's run (simulated)" if run.meta.get("simulated") is True else "this lab's run"
