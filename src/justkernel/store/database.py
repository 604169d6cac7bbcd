"""Engines for the store: SQLite by default (WAL, busy timeout, one writer), PostgreSQL by URL.

SQLite allows one writer at a time. Rather than let concurrent transactions fail with
"database is locked", every write goes through a writer engine with exactly one connection,
so writers queue in-process; reads use a separate small pool and, thanks to WAL, never block.
PostgreSQL uses one pooled engine for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Connection, Row
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.sql import ColumnElement, Executable, Select

from justkernel.core.records.base import Record

R = TypeVar("R", bound=Record)
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_SQLITE_BUSY_TIMEOUT_MS = 30_000


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


@dataclass
class Database:
    """The writer and reader engines of one database (the same engine on PostgreSQL)."""

    url: str
    writer: AsyncEngine
    reader: AsyncEngine

    # reads go to the reader engine (never blocked by the single SQLite writer, thanks to WAL)
    async def fetch_one(self, query: Executable) -> Row[Any] | None:
        """The one row a read finds, or None (more than one is an error)."""
        async with self.reader.connect() as conn:
            return (await conn.execute(query)).one_or_none()

    async def fetch_all(self, query: Executable) -> Sequence[Row[Any]]:
        async with self.reader.connect() as conn:
            return (await conn.execute(query)).all()

    async def record(self, cls: type[R], query: Executable) -> R | None:
        """The one row a read finds as a `cls` record, or None."""
        row = await self.fetch_one(query)
        return cls.from_row(row) if row is not None else None

    async def records(self, cls: type[R], query: Executable) -> list[R]:
        return cls.from_rows(await self.fetch_all(query))

    async def scalar(self, query: Executable) -> Any:
        """The single value of a read (a count, say)."""
        async with self.reader.connect() as conn:
            return (await conn.execute(query)).scalar_one()

    async def write(self, statement: Executable) -> Any:
        """One statement in a transaction of its own, on the writer; its result (rowcount)."""
        async with self.writer.begin() as conn:
            return await conn.execute(statement)

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()


def where_given(query: Select[Any], *filters: tuple[ColumnElement[Any], Any]) -> Select[Any]:
    """`query` narrowed by each (column, value) whose value is given (not None): the optional
    filters of a repository's list methods."""
    for column, value in filters:
        if value is not None:
            query = query.where(column == value)
    return query


def open_database(url: str) -> Database:
    """Create engines for `url` (no I/O yet); call `migrate` before first use."""
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # no reset when a connection goes back to the pool: closing it already rolled back
        # whatever it had open (SQLAlchemy 2), and the pool's second rollback was one more
        # round trip to the driver's thread per query
        writer = create_async_engine(
            url, pool_size=1, max_overflow=0, pool_timeout=300, pool_reset_on_return=None
        )
        reader = create_async_engine(
            url, pool_size=4, max_overflow=4, pool_timeout=60, pool_reset_on_return=None
        )
        for engine in (writer, reader):
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return Database(url=url, writer=writer, reader=reader)
    engine = create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)
    return Database(url=url, writer=engine, reader=engine)


def _upgrade(connection: Connection) -> None:
    # imported here: alembic costs about a second at import, and most commands never migrate
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate(db: Database) -> None:
    """Apply every pending Alembic migration (from empty, or from any earlier revision)."""
    async with db.writer.begin() as conn:
        await conn.run_sync(_upgrade)
