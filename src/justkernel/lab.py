"""The services of one lab process, wired once and passed explicitly (no hidden globals):
every repository of the store is built here, once, and taken from here."""

from __future__ import annotations

from dataclasses import dataclass

from justkernel.events import EventLog
from justkernel.settings.config import Settings
from justkernel.settings.secrets import SecretsStore
from justkernel.store import BlobStore, Database, RunRepository, migrate, open_database
from justkernel.store.approvals import ApprovalStore
from justkernel.store.candidates import CandidateStore
from justkernel.store.experiments import ExperimentBook
from justkernel.store.submissions import SubmissionStore
from justkernel.store.teams import TeamRegistry
from justkernel.store.tokens import TokenStore


@dataclass
class Lab:
    settings: Settings
    db: Database
    runs: RunRepository
    events: EventLog
    blobs: BlobStore
    secrets: SecretsStore
    teams: TeamRegistry
    experiments: ExperimentBook
    candidates: CandidateStore
    submissions: SubmissionStore
    tokens: TokenStore
    approvals: ApprovalStore

    async def close(self) -> None:
        await self.db.dispose()


async def open_lab(settings: Settings) -> Lab:
    """Create folders, open and migrate the database, and wire the services."""
    settings.ensure_dirs()
    db = open_database(settings.resolved_database_url)
    await migrate(db)
    events = EventLog(db)
    blobs = BlobStore(settings.blobs_dir)
    return Lab(
        settings=settings,
        db=db,
        runs=RunRepository(db),
        events=events,
        blobs=blobs,
        secrets=SecretsStore(settings.config_dir, settings.provider_keys),
        teams=TeamRegistry(db),
        experiments=ExperimentBook(db),
        candidates=CandidateStore(db, events, blobs),
        submissions=SubmissionStore(db),
        tokens=TokenStore(db),
        approvals=ApprovalStore(db),
    )
