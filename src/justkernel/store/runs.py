"""Runs: one lab session (live), one imported bundle (replay), or the bundled demo."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select

from justkernel.core.records.runs import Run, RunMode
from justkernel.store.database import Database
from justkernel.store.schema import runs


class UnknownRun(LookupError):
    """No run with that id."""


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
