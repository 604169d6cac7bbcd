"""The services of one lab process, wired once and passed explicitly (no hidden globals)."""

from __future__ import annotations

from dataclasses import dataclass

from justkernel.events import EventLog
from justkernel.settings.config import Settings
from justkernel.settings.secrets import SecretsStore
from justkernel.store import BlobStore, Database, RunRepository, migrate, open_database
from justkernel.store.submissions import SubmissionStore


@dataclass
class Lab:
    settings: Settings
    db: Database
    runs: RunRepository
    events: EventLog
    blobs: BlobStore
    secrets: SecretsStore
    submissions: SubmissionStore

    async def close(self) -> None:
        await self.db.dispose()


async def open_lab(settings: Settings) -> Lab:
    """Create folders, open and migrate the database, and wire the services."""
    settings.ensure_dirs()
    db = open_database(settings.resolved_database_url)
    await migrate(db)
    return Lab(
        settings=settings,
        db=db,
        runs=RunRepository(db),
        events=EventLog(db),
        blobs=BlobStore(settings.blobs_dir),
        secrets=SecretsStore(settings.config_dir),
        submissions=SubmissionStore(db),
    )
