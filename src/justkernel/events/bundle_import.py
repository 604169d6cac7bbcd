"""Import a bundle as a new read-only replay run, after checking every byte of it.

Validation finishes before anything is written: the zip envelope, every member's name and type,
declared sizes against the limit, then each member's actual bytes (counted while reading, so a
member that inflates past its declared size is caught) and SHA-256 against the manifest, and
every event line. Only then are the blobs stored (content-addressed: a later failure leaves
nothing wrong behind) and the run with its events inserted in one transaction, so a failed
write leaves no run.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import insert

from justkernel.events.bundle import (
    CHUNK_BYTES,
    EVENTS_NAME,
    MANIFEST_MAX_BYTES,
    MANIFEST_NAME,
    MAX_RUN_NAME,
    BundleError,
    InvalidBundle,
    Manifest,
    ProgressFn,
    blob_member,
    blob_refs,
    check_member_name,
    decode_event_line,
    is_known_member,
    parse_manifest,
    show,
)
from justkernel.events.model import Event
from justkernel.lab import Lab
from justkernel.store.blobs import BlobStore
from justkernel.store.runs import Run, new_run_id, utc_now_iso
from justkernel.store.schema import events as events_table
from justkernel.store.schema import runs as runs_table

LOCAL_HEADER, END_OF_DIRECTORY, END_RECORD_SIZE = b"PK\x03\x04", b"PK\x05\x06", 22
INSERT_BATCH = 1000
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)


@dataclass(frozen=True, slots=True)
class ValidatedBundle:
    """A bundle that passed every check; events are held in memory, blobs are still in the zip."""

    sha256: str
    size: int
    manifest: Manifest
    events: list[Event]
    blobs: list[str]  # sha256 of each blob member


@dataclass(frozen=True, slots=True)
class ImportResult:
    run: Run
    sha256: str
    event_count: int
    blob_count: int
    source_run_id: str


def _quiet(_stage: str, _done: int, _total: int) -> None:
    return None


def _check_envelope(f: BinaryIO, size: int, label: str) -> None:
    """We write plain zips: local header first, directory record last, no comment."""
    f.seek(0)
    head = f.read(4)
    if head == END_OF_DIRECTORY:
        raise InvalidBundle(f"{label} is an empty zip archive, not a JustKernel bundle")
    if head != LOCAL_HEADER:
        raise InvalidBundle(f"{label} is not a JustKernel bundle (not a zip archive)")
    f.seek(max(size - END_RECORD_SIZE, 0))
    tail = f.read(END_RECORD_SIZE)
    if len(tail) < END_RECORD_SIZE or tail[:4] != END_OF_DIRECTORY or tail[20:] != b"\0\0":
        raise InvalidBundle(
            f"{label} is truncated (or has data or a comment after the end of the zip archive)"
        )


def _file_sha256(f: BinaryIO, size: int, report: ProgressFn) -> str:
    f.seek(0)
    digest, done = hashlib.sha256(), 0
    while chunk := f.read(CHUNK_BYTES):
        digest.update(chunk)
        done += len(chunk)
        if done % (CHUNK_BYTES * 64) == 0:
            report("reading bundle", done, size)
    report("reading bundle", done, size)
    return digest.hexdigest()


def _check_entries(zf: zipfile.ZipFile, label: str, limit: int) -> dict[str, zipfile.ZipInfo]:
    """Names, types, compression and declared sizes, before a single member byte is read."""
    entries: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in zf.infolist():
        name = info.filename
        if info.orig_filename != name:
            raise InvalidBundle(f"member {show(info.orig_filename)} has an invalid name")
        check_member_name(name)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise InvalidBundle(f"member {show(name)} is a symbolic link")
        if info.is_dir() or (stat.S_IFMT(mode) and not stat.S_ISREG(mode)):
            raise InvalidBundle(f"member {show(name)} is not a regular file")
        if info.flag_bits & 0x1:
            raise InvalidBundle(f"member {show(name)} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise InvalidBundle(f"member {show(name)} uses an unsupported compression method")
        if name in entries:
            raise InvalidBundle(f"member {show(name)} appears twice")
        total += info.file_size
        if info.file_size > limit or total > limit:
            raise InvalidBundle(
                f"{label} unpacks to more than the import limit of {limit:,} bytes "
                f"(member {show(name)} declares {info.file_size:,}; JUSTKERNEL_EXPORT_MAX_BYTES)"
            )
        entries[name] = info
    if MANIFEST_NAME not in entries:
        raise InvalidBundle(
            f"{label} is a zip archive but not a JustKernel bundle (no {MANIFEST_NAME})"
        )
    for name in entries:
        if not is_known_member(name):
            raise InvalidBundle(
                f"unexpected member {show(name)}: a bundle holds only {MANIFEST_NAME}, "
                f"{EVENTS_NAME} and blobs/<sha256>"
            )
    return entries


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's bytes in bounded chunks; refuses more (or fewer) bytes than declared."""
    name, declared, count = info.filename, info.file_size, 0
    try:
        with zf.open(info) as stream:
            while chunk := stream.read(CHUNK_BYTES):
                count += len(chunk)
                if count > declared:
                    raise InvalidBundle(f"member {show(name)} holds more than its declared size")
                yield chunk
    except _ZIP_ERRORS as exc:
        raise InvalidBundle(f"member {show(name)} is corrupt or truncated ({exc})") from None
    if count != declared:
        raise InvalidBundle(f"member {show(name)} is truncated ({count:,} of {declared:,} bytes)")


def _hash_mismatch(name: str) -> InvalidBundle:
    return InvalidBundle(f"member {show(name)} does not match its SHA-256 in the manifest")


class _LineReader:
    """Splits a byte stream into event lines and parses them; remembers the first bad line
    so a tampered member is reported as a hash mismatch rather than as a parse error."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.events: list[Event] = []
        self.error: InvalidBundle | None = None
        self._parts: list[bytes] = []

    def _line(self, raw: bytes) -> None:
        if self.error is None:
            try:
                self.events.append(decode_event_line(raw, len(self.events) + 1, self.origin))
            except InvalidBundle as exc:
                self.error = exc

    def feed(self, chunk: bytes) -> None:
        pieces = chunk.split(b"\n")
        self._parts.append(pieces[0])
        if len(pieces) == 1:
            return
        self._line(b"".join(self._parts))
        for raw in pieces[1:-1]:
            self._line(raw)
        self._parts = [pieces[-1]]

    def finish(self) -> None:
        if any(self._parts) and self.error is None:
            self.error = InvalidBundle(f"{EVENTS_NAME} does not end with a line break")


def _read_events(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, manifest: Manifest, report: ProgressFn
) -> list[Event]:
    expected = manifest.members[EVENTS_NAME]
    reader = _LineReader(manifest.run.source_run_id)
    digest, done = hashlib.sha256(), 0
    for chunk in _read_member(zf, info):
        digest.update(chunk)
        reader.feed(chunk)
        done += len(chunk)
        report("checking events", done, expected.size)
    reader.finish()
    if digest.hexdigest() != expected.sha256:
        raise _hash_mismatch(EVENTS_NAME)
    if reader.error is not None:
        raise reader.error
    events = reader.events
    if len(events) != manifest.run.event_count:
        raise InvalidBundle(
            f"{EVENTS_NAME} holds {len(events)} events, the manifest says "
            f"{manifest.run.event_count}"
        )
    if sorted({e.schema_version for e in events}) != manifest.event_schema_versions:
        raise InvalidBundle("event schema versions differ from the manifest's list")
    return events


def read_bundle(
    f: BinaryIO, label: str, limit: int, progress: ProgressFn | None = None
) -> ValidatedBundle:
    """Check an open bundle file completely (see the module docstring); raises `InvalidBundle`."""
    report = progress or _quiet
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        raise InvalidBundle(f"{label} is empty")
    if size > limit:
        raise InvalidBundle(
            f"{label} is {size:,} bytes, over the import limit of {limit:,} bytes "
            "(JUSTKERNEL_EXPORT_MAX_BYTES)"
        )
    _check_envelope(f, size, label)
    file_sha = _file_sha256(f, size, report)
    try:
        zf = zipfile.ZipFile(f)
    except (*_ZIP_ERRORS, ValueError) as exc:
        raise InvalidBundle(f"{label} is not a valid zip archive ({exc})") from None
    with zf:
        entries = _check_entries(zf, label, limit)
        if entries[MANIFEST_NAME].file_size > MANIFEST_MAX_BYTES:
            raise InvalidBundle(f"{MANIFEST_NAME} is over {MANIFEST_MAX_BYTES:,} bytes")
        manifest = parse_manifest(b"".join(_read_member(zf, entries[MANIFEST_NAME])))
        present = set(entries) - {MANIFEST_NAME}
        missing, extra = (
            sorted(set(manifest.members) - present),
            sorted(present - manifest.members.keys()),
        )
        if missing:
            raise InvalidBundle(f"member {show(missing[0])} is listed in the manifest but missing")
        if extra:
            raise InvalidBundle(f"member {show(extra[0])} is not listed in the manifest")
        for name, member in sorted(manifest.members.items()):
            if entries[name].file_size != member.size:
                raise InvalidBundle(
                    f"member {show(name)} is {entries[name].file_size:,} bytes, the manifest "
                    f"says {member.size:,}"
                )
        events = _read_events(zf, entries[EVENTS_NAME], manifest, report)
        blobs = sorted(m.sha256 for n, m in manifest.members.items() if n != EVENTS_NAME)
        for done, blob in enumerate(blobs, start=1):
            digest = hashlib.sha256()
            for chunk in _read_member(zf, entries[blob_member(blob)]):
                digest.update(chunk)
            if digest.hexdigest() != blob:
                raise _hash_mismatch(blob_member(blob))
            report("checking blobs", done, len(blobs))
    _check_blob_refs(events, set(blobs))
    return ValidatedBundle(
        sha256=file_sha, size=size, manifest=manifest, events=events, blobs=blobs
    )


def _check_blob_refs(events: list[Event], blobs: set[str]) -> None:
    named: set[str] = set()
    for event in events:
        for ref in blob_refs(event, InvalidBundle):
            if ref not in blobs:
                raise InvalidBundle(f"event seq {event.seq} names blob {ref}, which is missing")
            named.add(ref)
    unnamed = sorted(blobs - named)
    if unnamed:
        raise InvalidBundle(f"member {show(blob_member(unnamed[0]))} is not named by any event")


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    if not path.exists():
        raise InvalidBundle(f"{path} does not exist")
    if not path.is_file():
        raise InvalidBundle(f"{path} is not a regular file")
    try:
        f = path.open("rb")
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror}") from None
    with f:
        yield f


def check_bundle(path: Path, limit: int, progress: ProgressFn | None = None) -> ValidatedBundle:
    """Validate a bundle file without importing it (a dry run)."""
    path = Path(path)
    with _open(path) as f:
        return read_bundle(f, str(path), limit, progress)


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
                data = b"".join(_read_member(zf, info))
                if hashlib.sha256(data).hexdigest() != sha:
                    raise InvalidBundle("the bundle file changed while it was imported")
                store.put(data)
            report("storing blobs", done, len(bundle.blobs))


def _new_meta(bundle: ValidatedBundle, imported_at: str) -> dict[str, object]:
    source = bundle.manifest.run
    return {
        **source.meta,
        "source_run_id": source.source_run_id,
        "source_name": source.name,
        "source_mode": source.mode,
        "source_created_at": source.created_at,
        "simulated": source.simulated,
        "bundle_sha256": bundle.sha256,
        "bundle_format_version": bundle.manifest.format_version,
        "imported_at": imported_at,
    }


async def _insert_run(
    lab: Lab, bundle: ValidatedBundle, name: str | None, report: ProgressFn
) -> Run:
    """The run row and every event in one transaction: all of it or none of it.

    Mirrors `RunRepository.create` + `EventLog.insert_verbatim`, which each open their own
    transaction; see the note in docs/replay-format.md.
    """
    run_id, now, events = new_run_id(), utc_now_iso(), bundle.events
    async with lab.db.writer.begin() as conn:
        await conn.execute(
            insert(runs_table).values(
                id=run_id,
                name=name or bundle.manifest.run.name,
                mode="replay",
                read_only=True,
                created_at=now,
                last_seq=len(events),
                meta=_new_meta(bundle, now),
            )
        )
        for start in range(0, len(events), INSERT_BATCH):
            batch = events[start : start + INSERT_BATCH]
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
            report("loading events", start + len(batch), len(events))
    return await lab.runs.get(run_id)


async def import_bundle(
    lab: Lab, path: Path, *, name: str | None = None, progress: ProgressFn | None = None
) -> ImportResult:
    """Validate `path` fully, then load it as a new read-only replay run.

    Raises `InvalidBundle` (nothing changed) for any bad file.
    """
    report = progress or _quiet
    path = Path(path)
    if name is not None and not 0 < len(name) <= MAX_RUN_NAME:
        raise BundleError(f"run name must be 1-{MAX_RUN_NAME} characters")
    with _open(path) as f:
        bundle = await asyncio.to_thread(
            read_bundle, f, str(path), lab.settings.export_max_bytes, report
        )
        await asyncio.to_thread(_store_blobs, f, bundle, lab.blobs, report)
    run = await _insert_run(lab, bundle, name, report)
    return ImportResult(
        run=run,
        sha256=bundle.sha256,
        event_count=len(bundle.events),
        blob_count=len(bundle.blobs),
        source_run_id=bundle.manifest.run.source_run_id,
    )
