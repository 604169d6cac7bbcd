"""Runs: one lab session (live), one imported bundle (replay), or the bundled demo."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import insert, select

from justkernel.store.database import Database
from justkernel.store.records import Record
from justkernel.store.schema import runs

RunMode = Literal["live", "replay", "demo"]


class UnknownRun(LookupError):
    """No run with that id."""


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


def utc_now_iso() -> str:
    """Timestamps are UTC ISO-8601 text with microseconds: sortable and stored exactly."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class RunRepository:
    """Create, list and look up runs."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self,
        name: str,
        *,
        mode: RunMode = "live",
        read_only: bool = False,
        meta: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> Run:
        run = Run(
            id=run_id or new_run_id(),
            name=name,
            mode=mode,
            read_only=read_only,
            created_at=utc_now_iso(),
            last_seq=0,
            meta=meta or {},
        )
        await self._db.write(
            insert(runs).values(
                id=run.id,
                name=run.name,
                mode=run.mode,
                read_only=run.read_only,
                created_at=run.created_at,
                last_seq=0,
                meta=run.meta,
            )
        )
        return run

    async def get(self, run_id: str) -> Run:
        found = await self._db.record(Run, select(runs).where(runs.c.id == run_id))
        if found is None:
            raise UnknownRun(run_id)
        return found

    async def list(self) -> list[Run]:
        return await self._db.records(Run, select(runs).order_by(runs.c.created_at.desc()))
