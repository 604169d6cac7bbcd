"""Store a checked bundle as a new read-only replay run.

`run_archive_check.read_bundle` validates the whole file first; only then does this module write.
Blobs are stored first (content-addressed: a later failure leaves nothing wrong behind). The
store reads the events member again in batches inside the one transaction that also writes the
run row, re-hashing as it goes, so a failed or changed file leaves no run.

The new run is marked as imported (`meta.imported`, `meta.provenance`): whatever the manifest
says (`simulated: false`, its own meta), it is never shown as a run this lab recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import insert

from justkernel.core.records.runs import Run, imported_provenance
from justkernel.events.model import Event
from justkernel.events.run_archive import (
    EVENTS_NAME,
    MAX_RUN_NAME,
    ArchiveServices,
    BundleError,
    InvalidBundle,
    ProgressFn,
    blob_member,
)
from justkernel.events.run_archive_check import (
    ZIP_ERRORS,
    Checks,
    LineReader,
    ValidatedBundle,
    open_bundle,
    quiet,
    read_bundle,
    read_member,
)
from justkernel.events.run_export import SecretScanner
from justkernel.store.blobs import BlobStore
from justkernel.store.runs import new_run_id, utc_now_iso
from justkernel.store.schema import events as events_table
from justkernel.store.schema import runs as runs_table

INSERT_BATCH = 1000


@dataclass(frozen=True, slots=True)
class ImportResult:
    run: Run
    sha256: str
    event_count: int
    blob_count: int
    source_run_id: str


def _store_blobs(
    f: BinaryIO, bundle: ValidatedBundle, store: BlobStore, report: ProgressFn
) -> None:
    """Copy blobs into the store, re-hashing each: the file could change after validation."""
    with zipfile.ZipFile(f) as zf:
        for done, sha in enumerate(bundle.blobs, start=1):
            if not store.has(sha):
                try:
                    info = zf.getinfo(blob_member(sha))
                except KeyError:
                    raise InvalidBundle("the bundle file changed while it was imported") from None
                data = b"".join(read_member(zf, info))
                if hashlib.sha256(data).hexdigest() != sha:
                    raise InvalidBundle("the bundle file changed while it was imported")
                store.put(data)
            report("storing blobs", done, len(bundle.blobs))


def _new_meta(bundle: ValidatedBundle, imported_at: str) -> dict[str, object]:
    """The source's meta under the lab's own provenance keys (set last: a bundle cannot forge
    them). `simulated` is the bundle's claim; `imported` and `provenance` say it is one."""
    source = bundle.manifest.run
    return {
        **source.meta,
        "source_run_id": source.source_run_id,
        "source_name": source.name,
        "source_mode": source.mode,
        "source_created_at": source.created_at,
        "simulated": source.simulated,
        "imported": True,
        "provenance": imported_provenance(source.simulated),
        "bundle_sha256": bundle.sha256,
        "bundle_format_version": bundle.manifest.format_version,
        "imported_at": imported_at,
    }


def _event_batches(f: BinaryIO, bundle: ValidatedBundle) -> Iterator[list[Event]]:
    """The events member read again, in batches of INSERT_BATCH, re-hashed: a file that
    changed since it was checked is refused (the transaction then leaves no run)."""
    changed = InvalidBundle("the bundle file changed while it was imported")
    pending: list[Event] = []
    try:
        with zipfile.ZipFile(f) as zf:
            info = zf.getinfo(EVENTS_NAME)
            reader = LineReader(
                bundle.manifest.run.source_run_id, pending.append, bundle.event_count
            )
            digest = hashlib.sha256()
            for chunk in read_member(zf, info):
                digest.update(chunk)
                reader.feed(chunk)
                if reader.error is not None:
                    raise changed
                while len(pending) >= INSERT_BATCH:
                    yield pending[:INSERT_BATCH]
                    del pending[:INSERT_BATCH]
            reader.finish()
    except (KeyError, InvalidBundle, *ZIP_ERRORS):
        raise changed from None
    expected = bundle.manifest.members[EVENTS_NAME].sha256
    if reader.error is not None or digest.hexdigest() != expected:
        raise changed
    if reader.count != bundle.event_count:
        raise changed
    if pending:
        yield pending


async def _insert_run(
    lab: ArchiveServices, f: BinaryIO, bundle: ValidatedBundle, name: str | None, report: ProgressFn
) -> Run:
    """The run row and every event in one transaction: all of it or none of it. Events are
    read from the file batch by batch (in a thread), never all at once.

    Mirrors `RunRepository.create` + `EventLog.insert_verbatim`, which each open their own
    transaction; see the note in docs/replay-format.md.
    """
    run_id, now, total = new_run_id(), utc_now_iso(), bundle.event_count
    batches, done = _event_batches(f, bundle), 0
    async with lab.db.writer.begin() as conn:
        await conn.execute(
            insert(runs_table).values(
                id=run_id,
                name=name or bundle.manifest.run.name,
                mode="replay",
                read_only=True,
                created_at=now,
                last_seq=total,
                meta=_new_meta(bundle, now),
            )
        )
        while (batch := await asyncio.to_thread(next, batches, None)) is not None:
            rows = [
                {
                    "run_id": run_id,
                    "seq": e.seq,
                    "kind": e.kind,
                    "team": e.team,
                    "ts": e.ts,
                    "schema_version": e.schema_version,
                    "payload": e.payload_json,
                }
                for e in batch
            ]
            await conn.execute(insert(events_table), rows)
            done += len(batch)
            report("loading events", done, total)
    return await lab.runs.get(run_id)


def _scanner(lab: ArchiveServices) -> SecretScanner:
    """The stored secrets' values; refusing (rather than skipping the check) if unreadable."""
    try:
        return SecretScanner.from_store(lab.secrets)
    except BundleError as exc:
        raise InvalidBundle(f"the bundle was not imported: {exc}") from None


async def import_bundle(
    lab: ArchiveServices, path: Path, *, name: str | None = None, progress: ProgressFn | None = None
) -> ImportResult:
    """Validate `path` fully, then load it as a new read-only replay run.

    Raises `InvalidBundle` (nothing changed) for any bad file.
    """
    report = progress or quiet
    path = Path(path)
    if name is not None and not 0 < len(name) <= MAX_RUN_NAME:
        raise BundleError(f"run name must be 1-{MAX_RUN_NAME} characters")
    settings = lab.settings
    checks = Checks(settings.export_max_bytes, settings.import_max_events, _scanner(lab))
    with open_bundle(path) as f:
        bundle = await asyncio.to_thread(read_bundle, f, str(path), checks, report)
        await asyncio.to_thread(_store_blobs, f, bundle, lab.blobs, report)
        run = await _insert_run(lab, f, bundle, name, report)
    return ImportResult(
        run=run,
        sha256=bundle.sha256,
        event_count=bundle.event_count,
        blob_count=len(bundle.blobs),
        source_run_id=bundle.manifest.run.source_run_id,
    )
