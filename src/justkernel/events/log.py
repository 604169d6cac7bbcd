"""The append-only event log: durable append with a gap-free per-run sequence, reads, and
live subscriptions that never show a gap or a duplicate.

Sequence numbers come from `runs.last_seq`, incremented in the same transaction as the event
insert: the row update serialises writers of one run (a row lock on PostgreSQL, the single
writer connection on SQLite), and a rolled-back append gives its number back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update

from justkernel.events.bus import EventBus
from justkernel.events.model import EVENT_SCHEMA_VERSION, Event, encode_payload
from justkernel.store.database import Database
from justkernel.store.runs import UnknownRun, utc_now_iso
from justkernel.store.schema import events, runs

READ_PAGE = 1000
POLL_SECONDS = 1.0  # picks up events appended by another process sharing the database


class ReadOnlyRun(PermissionError):
    """Replays and demos are read-only: nothing may be appended to them."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append; the log assigns run, sequence and timestamp."""

    kind: str
    payload: dict[str, Any]
    team: str | None = None


def _row_to_event(row: Any) -> Event:
    return Event(
        run_id=row.run_id,
        seq=row.seq,
        kind=row.kind,
        team=row.team,
        ts=row.ts,
        schema_version=row.schema_version,
        payload_json=row.payload,
    )


class EventLog:
    def __init__(self, db: Database, bus: EventBus | None = None) -> None:
        self._db = db
        self.bus = bus or EventBus()

    async def append(
        self, run_id: str, kind: str, payload: dict[str, Any], team: str | None = None
    ) -> Event:
        (event,) = await self.append_many(run_id, [NewEvent(kind, payload, team)])
        return event

    async def append_many(self, run_id: str, items: Sequence[NewEvent]) -> list[Event]:
        """Append several events of one run atomically, with consecutive sequence numbers."""
        if not items:
            return []
        for item in items:
            if not item.kind or len(item.kind) > 64:
                raise ValueError(f"event kind must be 1-64 characters, got {item.kind!r}")
        async with self._db.writer.begin() as conn:
            row = (
                await conn.execute(
                    update(runs)
                    .where(runs.c.id == run_id)
                    .values(last_seq=runs.c.last_seq + len(items))
                    .returning(runs.c.last_seq, runs.c.read_only)
                )
            ).one_or_none()
            if row is None:
                raise UnknownRun(run_id)
            if row.read_only:
                raise ReadOnlyRun(f"run {run_id} is a read-only replay")
            first = row.last_seq - len(items) + 1
            ts = utc_now_iso()
            new = [
                Event(
                    run_id=run_id,
                    seq=first + i,
                    kind=item.kind,
                    team=item.team,
                    ts=ts,
                    schema_version=EVENT_SCHEMA_VERSION,
                    payload_json=encode_payload(item.payload),
                )
                for i, item in enumerate(items)
            ]
            await conn.execute(
                insert(events),
                [
                    {
                        "run_id": e.run_id,
                        "seq": e.seq,
                        "kind": e.kind,
                        "team": e.team,
                        "ts": e.ts,
                        "schema_version": e.schema_version,
                        "payload": e.payload_json,
                    }
                    for e in new
                ],
            )
        self.bus.publish(new)
        return new

    async def insert_verbatim(self, run_id: str, items: Sequence[Event]) -> None:
        """Load already-sequenced events (an import) exactly as they were; used on new runs."""
        if not items:
            return
        async with self._db.writer.begin() as conn:
            await conn.execute(
                insert(events),
                [
                    {
                        "run_id": run_id,
                        "seq": e.seq,
                        "kind": e.kind,
                        "team": e.team,
                        "ts": e.ts,
                        "schema_version": e.schema_version,
                        "payload": e.payload_json,
                    }
                    for e in items
                ],
            )
            await conn.execute(
                update(runs).where(runs.c.id == run_id).values(last_seq=max(e.seq for e in items))
            )

    async def read(
        self,
        run_id: str,
        *,
        after: int = 0,
        limit: int = READ_PAGE,
        before: int | None = None,
        kinds: Sequence[str] | None = None,
        team: str | None = None,
        newest_first: bool = False,
    ) -> list[Event]:
        """A page of events in sequence order (or newest first), optionally filtered."""
        query = select(events).where(events.c.run_id == run_id, events.c.seq > after)
        if before is not None:
            query = query.where(events.c.seq < before)
        if kinds:
            query = query.where(events.c.kind.in_(list(kinds)))
        if team is not None:
            query = query.where(events.c.team == team)
        order = events.c.seq.desc() if newest_first else events.c.seq
        query = query.order_by(order).limit(limit)
        async with self._db.reader.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_row_to_event(r) for r in rows]

    async def iter_all(self, run_id: str, *, after: int = 0) -> AsyncIterator[Event]:
        """Every event after `after`, page by page."""
        last = after
        while True:
            page = await self.read(run_id, after=last)
            for event in page:
                yield event
            if len(page) < READ_PAGE:
                return
            last = page[-1].seq

    async def subscribe(self, run_id: str, *, after: int = 0) -> AsyncIterator[Event]:
        """Every event after `after`, then live ones, strictly in order, forever.

        Registers on the bus before reading the backlog, so nothing slips between the two;
        anything out of order, duplicated or dropped is repaired from the store.
        """
        sub = self.bus.register(run_id)
        last = after
        try:
            async for event in self.iter_all(run_id, after=last):
                yield event
                last = event.seq
            while True:
                if sub.lagging:
                    sub.lagging = False
                    sub.drain()
                    async for event in self.iter_all(run_id, after=last):
                        yield event
                        last = event.seq
                    continue
                try:
                    event = await asyncio.wait_for(sub.queue.get(), timeout=POLL_SECONDS)
                except TimeoutError:
                    async for polled in self.iter_all(run_id, after=last):
                        yield polled
                        last = polled.seq
                    continue
                if event.seq <= last:
                    continue
                if event.seq == last + 1:
                    yield event
                    last = event.seq
                    continue
                async for missed in self.iter_all(run_id, after=last):
                    yield missed
                    last = missed.seq
        finally:
            self.bus.unregister(sub)
