"""Durable state: runs and events (SQLAlchemy async, Alembic migrations) and the blob store."""

from justkernel.store.blobs import BlobStore
from justkernel.store.database import Database, migrate, open_database
from justkernel.store.runs import Run, RunRepository, UnknownRun, utc_now_iso

__all__ = [
    "BlobStore",
    "Database",
    "Run",
    "RunRepository",
    "UnknownRun",
    "migrate",
    "open_database",
    "utc_now_iso",
]
