"""The append-only event log: durable append with a gap-free per-run sequence, reads, and
live subscriptions that never show a gap or a duplicate.

Sequence numbers come from `runs.last_seq`, incremented in the same transaction as the event
insert: the row update serialises writers of one run (a row lock on PostgreSQL, the single
writer connection on SQLite), and a rolled-back append gives its number back.

On SQLite a group commit's two statements go straight to the driver (aiosqlite), inside the
transaction SQLAlchemy opened: through SQLAlchemy's adapter each statement is four round trips
to the driver's thread (cursor, execute, fetch, close), straight it is one. PostgreSQL keeps
the SQLAlchemy statements; both write the same rows.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from justkernel.core.events import EventPayload, schema_version_of
from justkernel.events.bus import EventBus
from justkernel.events.model import Event, encode_payload
from justkernel.store.database import Database
from justkernel.store.runs import UnknownRun, utc_now_iso
from justkernel.store.schema import events, runs

READ_PAGE = 1000
_SQLITE_ADVANCE = (
    "UPDATE runs SET last_seq = last_seq + ? WHERE id = ? AND read_only = 0 RETURNING last_seq"
)
_SQLITE_INSERT = (
    "INSERT INTO events (dedup_key, run_id, seq, kind, team, ts, schema_version, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
MAX_GROUP = 256  # appends per group-commit transaction
POLL_SECONDS = 1.0  # picks up events appended by another process sharing the database


class ReadOnlyRun(PermissionError):
    """Replays and demos are read-only: nothing may be appended to them."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append; the log assigns run, sequence and timestamp."""

    kind: str
    payload: dict[str, Any]
    team: str | None = None
    dedup_key: str | None = None  # the same key in a run is written once
    schema_version: int | None = None  # None: the version of `kind`'s payload model

    @classmethod
    def of(
        cls, payload: EventPayload, team: str | None = None, dedup_key: str | None = None
    ) -> NewEvent:
        """The event a payload model describes: its kind, its fields, its schema version."""
        return cls(payload.KIND, payload.to_payload(), team, dedup_key, payload.SCHEMA_VERSION)


@dataclass(slots=True)
class _PendingAppend:
    run_id: str
    items: list[NewEvent]
    future: asyncio.Future[list[Event]]


def _event_row(event: Event, dedup_key: str | None = None) -> dict[str, Any]:
    return {
        "dedup_key": dedup_key,
        "run_id": event.run_id,
        "seq": event.seq,
        "kind": event.kind,
        "team": event.team,
        "ts": event.ts,
        "schema_version": event.schema_version,
        "payload": event.payload_json,
    }


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
        self._pending: list[_PendingAppend] = []
        self._flusher: asyncio.Task[None] | None = None
        self._sqlite = db.url.startswith("sqlite")

    async def append(
        self,
        run_id: str,
        kind: str | EventPayload,
        payload: dict[str, Any] | None = None,
        team: str | None = None,
        *,
        dedup_key: str | None = None,
    ) -> Event:
        """Append one event: a payload model (`append(run_id, TeamTurn(state="started"),
        team=...)`; the lab's writers do this), or a kind and a raw payload (imports, tests).
        With `dedup_key`, an event already written under that key in this run is returned
        instead of writing a second one."""
        if isinstance(kind, EventPayload):
            if payload is not None:
                raise TypeError("a payload model carries its payload: pass no second one")
            item = NewEvent.of(kind, team, dedup_key)
        else:
            item = NewEvent(kind, payload if payload is not None else {}, team, dedup_key)
        (event,) = await self.append_many(run_id, [item])
        return event

    async def append_many(self, run_id: str, items: Sequence[NewEvent]) -> list[Event]:
        """Append several events of one run atomically, with consecutive sequence numbers.

        Concurrent appends are grouped into one transaction (group commit): each round trip
        to the database costs far more than the rows it carries.
        """
        if not items:
            return []
        for item in items:
            if not item.kind or len(item.kind) > 64:
                raise ValueError(f"event kind must be 1-64 characters, got {item.kind!r}")
        future: asyncio.Future[list[Event]] = asyncio.get_running_loop().create_future()
        self._pending.append(_PendingAppend(run_id, list(items), future))
        if self._flusher is None or self._flusher.done():
            # a task of its own, so a caller that is cancelled cannot abort others' writes
            self._flusher = asyncio.create_task(self._flush_pending())
        return await asyncio.shield(future)

    async def _flush_pending(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:MAX_GROUP], self._pending[MAX_GROUP:]
            try:
                try:  # optimistic: a dedup key is almost never written already
                    written, fresh = await self._write_group(batch, look_up=False)
                except (IntegrityError, sqlite3.IntegrityError):  # one was (redone after a crash)
                    written, fresh = await self._write_group(batch, look_up=True)
            except Exception as exc:  # the whole transaction rolled back: every caller learns why
                for pending in batch:
                    if not pending.future.done():
                        pending.future.set_exception(exc)
                continue
            self.bus.publish(fresh)
            for index, pending in enumerate(batch):
                if pending.future.done():
                    continue
                if isinstance(written.get(index), Exception):
                    pending.future.set_exception(written[index])  # type: ignore[arg-type]
                else:
                    pending.future.set_result(written[index])  # type: ignore[arg-type]

    async def _write_group(
        self, batch: list[_PendingAppend], *, look_up: bool
    ) -> tuple[dict[int, Any], list[Event]]:
        """One transaction for many appends: one counter update per run, one insert for all.

        Without `look_up` the dedup keys are not read first: a key already in the log makes
        the insert fail on its unique index, the transaction rolls back whole (its sequence
        numbers with it), and the caller writes the group again with `look_up`. That saves a
        query per group, since a written key comes back only for work redone after a crash.
        A bad run (unknown, read-only) fails only the appends aimed at it.
        """
        by_run: dict[str, list[int]] = {}
        for index, pending in enumerate(batch):
            by_run.setdefault(pending.run_id, []).append(index)
        results: dict[int, Any] = {}
        rows: list[dict[str, Any]] = []
        fresh: list[Event] = []
        ts = utc_now_iso()
        async with self._db.writer.begin() as conn:
            for run_id, indices in by_run.items():
                existing = (
                    await self._existing(
                        conn, run_id, [it.dedup_key for i in indices for it in batch[i].items]
                    )
                    if look_up
                    else {}
                )
                total = len(
                    {
                        it.dedup_key if it.dedup_key is not None else (i, n)
                        for i in indices
                        for n, it in enumerate(batch[i].items)
                        if it.dedup_key is None or it.dedup_key not in existing
                    }
                )
                last_seq = await self._advance(conn, run_id, total)
                if last_seq is None:
                    refusal = await self._refusal(conn, run_id)
                    results.update(dict.fromkeys(indices, refusal))
                    continue
                seq = last_seq - total
                for index in indices:
                    new = []
                    for item in batch[index].items:
                        if item.dedup_key is not None and item.dedup_key in existing:
                            new.append(existing[item.dedup_key])
                            continue
                        seq += 1
                        new.append(
                            Event(
                                run_id=run_id,
                                seq=seq,
                                kind=item.kind,
                                team=item.team,
                                ts=ts,
                                schema_version=item.schema_version or schema_version_of(item.kind),
                                payload_json=encode_payload(item.payload),
                            )
                        )
                        rows.append(_event_row(new[-1], item.dedup_key))
                        fresh.append(new[-1])
                        if item.dedup_key is not None:
                            existing[item.dedup_key] = new[-1]
                    results[index] = new
            if rows:
                await self._insert(conn, rows)
        return results, sorted(fresh, key=lambda e: (e.run_id, e.seq))

    async def _advance(self, conn: AsyncConnection, run_id: str, total: int) -> int | None:
        """Reserve `total` sequence numbers of a run: its new `last_seq`, or None when the run
        is unknown or read-only."""
        if self._sqlite:
            driver = (await conn.get_raw_connection()).driver_connection
            found = list(await driver.execute_fetchall(_SQLITE_ADVANCE, (total, run_id)))
            return int(found[0][0]) if found else None
        row = (
            await conn.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.read_only.is_(False))
                .values(last_seq=runs.c.last_seq + total)
                .returning(runs.c.last_seq)
            )
        ).one_or_none()
        return None if row is None else int(row.last_seq)

    async def _insert(self, conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
        if self._sqlite:
            driver = (await conn.get_raw_connection()).driver_connection
            await driver.executemany(
                _SQLITE_INSERT,
                [
                    (
                        r["dedup_key"],
                        r["run_id"],
                        r["seq"],
                        r["kind"],
                        r["team"],
                        r["ts"],
                        r["schema_version"],
                        r["payload"],
                    )
                    for r in rows
                ],
            )
            return
        await conn.execute(insert(events), rows)

    @staticmethod
    async def _existing(conn: Any, run_id: str, keys: list[str | None]) -> dict[str, Event]:
        wanted = sorted({k for k in keys if k is not None})
        if not wanted:
            return {}
        rows = (
            await conn.execute(
                select(events).where(events.c.run_id == run_id, events.c.dedup_key.in_(wanted))
            )
        ).all()
        return {row.dedup_key: _row_to_event(row) for row in rows}

    @staticmethod
    async def _refusal(conn: Any, run_id: str) -> Exception:
        exists = (await conn.execute(select(runs.c.id).where(runs.c.id == run_id))).one_or_none()
        if exists is None:
            return UnknownRun(run_id)
        return ReadOnlyRun(f"run {run_id} is a read-only replay")

    async def insert_verbatim(self, run_id: str, items: Sequence[Event]) -> None:
        """Load already-sequenced events (an import) exactly as they were; used on new runs."""
        if not items:
            return
        async with self._db.writer.begin() as conn:
            await conn.execute(
                insert(events), [_event_row(replace(e, run_id=run_id)) for e in items]
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
