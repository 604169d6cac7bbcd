"""Check a session bundle from outside, every byte of it, before anything is written.

A bundle comes from outside, so nothing in it is trusted. The check reads, in order: the zip
envelope, every member's name and type, declared sizes against the limit, then each member's
actual bytes (counted while reading, so a member that inflates past its declared size is caught)
and SHA-256 against the manifest, every event line (at most `import_max_events` of them: the
manifest's count is refused first, the lines are counted as they stream), and every event and
blob against the values of the lab's stored secrets (the export's own scanner: a bundle with a
secret is refused at both ends). Events are streamed, never held: the check keeps a count and
the blob names (the events themselves only when asked, for the demo).

It writes nothing, so the dry run (`justkernel import --check`) and the demo use it alone;
`run_import` stores a bundle that passed it as a new run.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from justkernel.events.model import Event
from justkernel.events.run_archive import (
    CHUNK_BYTES,
    EVENTS_NAME,
    MANIFEST_MAX_BYTES,
    MANIFEST_NAME,
    RECEIPT_MAX_BYTES,
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
    receipt_trace_refs,
    show,
)
from justkernel.events.run_export import SecretScanner

LOCAL_HEADER, END_OF_DIRECTORY, END_RECORD_SIZE = b"PK\x03\x04", b"PK\x05\x06", 22
DEFAULT_MAX_EVENTS = 200_000  # Settings.import_max_events
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)


@dataclass(frozen=True, slots=True)
class ValidatedBundle:
    """A bundle that passed every check; events and blobs are still in the zip (the events
    themselves only when asked for: `check_bundle(keep_events=True)`, for the demo)."""

    sha256: str
    size: int
    manifest: Manifest
    event_count: int
    blobs: list[str]  # sha256 of each blob member
    events: tuple[Event, ...] = ()


@dataclass(frozen=True, slots=True)
class Checks:
    """What an outside bundle is held to besides the format: size, event count, secrets."""

    limit: int  # bytes, compressed and unpacked (Settings.export_max_bytes)
    max_events: int = DEFAULT_MAX_EVENTS  # Settings.import_max_events
    scanner: SecretScanner | None = None  # the stored secrets' values; None: no store to scan


def quiet(_stage: str, _done: int, _total: int) -> None:
    """The progress callback when the caller gives none."""
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


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's bytes in bounded chunks; refuses more (or fewer) bytes than declared."""
    name, declared, count = info.filename, info.file_size, 0
    try:
        with zf.open(info) as stream:
            while chunk := stream.read(CHUNK_BYTES):
                count += len(chunk)
                if count > declared:
                    raise InvalidBundle(f"member {show(name)} holds more than its declared size")
                yield chunk
    except ZIP_ERRORS as exc:
        raise InvalidBundle(f"member {show(name)} is corrupt or truncated ({exc})") from None
    if count != declared:
        raise InvalidBundle(f"member {show(name)} is truncated ({count:,} of {declared:,} bytes)")


def _hash_mismatch(name: str) -> InvalidBundle:
    return InvalidBundle(f"member {show(name)} does not match its SHA-256 in the manifest")


def _secret_refused(found: str, where: str) -> InvalidBundle:
    return InvalidBundle(
        f"{where} contains {found}; a bundle must carry no secret, so nothing was imported"
    )


class _StreamScan:
    """The secret scan of a member read in chunks: each chunk with the tail of the one before
    (`SecretScanner.overlap`), so no value is missed across a boundary; once per chunk, not per
    line (the scan also runs `redaction`, which is not cheap)."""

    def __init__(self, scanner: SecretScanner | None) -> None:
        self.scanner = scanner
        self._carry = b""

    def check(self, chunk: bytes, where: Callable[[], str]) -> None:
        if self.scanner is None:
            return
        window = self._carry + chunk
        if found := self.scanner.find(window):
            raise _secret_refused(found, where())
        self._carry = window[-self.scanner.overlap :] if self.scanner.overlap else b""


class LineReader:
    """Splits a byte stream into event lines and hands each parsed event to `sink`; remembers
    the first bad line so a tampered member is reported as a hash mismatch rather than as a
    parse error. Refuses at once past `max_events` lines."""

    def __init__(self, origin: str, sink: Callable[[Event], None], max_events: int) -> None:
        self.origin = origin
        self.sink = sink
        self.max_events = max_events
        self.count = 0
        self.error: InvalidBundle | None = None
        self._parts: list[bytes] = []

    def _line(self, raw: bytes) -> None:
        self.count += 1
        if self.count > self.max_events:
            raise _too_many(self.max_events, f"{EVENTS_NAME} holds more than that")
        if self.error is None:
            try:
                self.sink(decode_event_line(raw, self.count, self.origin))
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


def _too_many(cap: int, detail: str) -> InvalidBundle:
    return InvalidBundle(
        f"the bundle has more events than the import limit of {cap:,} ({detail}; "
        "JUSTKERNEL_IMPORT_MAX_EVENTS)"
    )


@dataclass
class _EventSummary:
    """What the check keeps of the events: never the events themselves (unless asked)."""

    keep: bool
    kept: list[Event]
    versions: set[int]
    refs: dict[str, int]  # blob sha256 -> first event seq naming it

    def add(self, event: Event) -> None:
        self.versions.add(event.schema_version)
        for ref in blob_refs(event, InvalidBundle):
            self.refs.setdefault(ref, event.seq)
        if self.keep:
            self.kept.append(event)


def _read_events(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    manifest: Manifest,
    checks: Checks,
    keep: bool,
    report: ProgressFn,
) -> tuple[int, _EventSummary]:
    expected = manifest.members[EVENTS_NAME]
    summary = _EventSummary(keep, [], set(), {})
    reader = LineReader(manifest.run.source_run_id, summary.add, checks.max_events)
    scan = _StreamScan(checks.scanner)
    digest, done = hashlib.sha256(), 0
    for chunk in read_member(zf, info):
        digest.update(chunk)
        scan.check(chunk, lambda: f"{EVENTS_NAME} (from line {reader.count + 1} on)")
        reader.feed(chunk)
        done += len(chunk)
        report("checking events", done, expected.size)
    reader.finish()
    if digest.hexdigest() != expected.sha256:
        raise _hash_mismatch(EVENTS_NAME)
    if reader.error is not None:
        raise reader.error
    if reader.count != manifest.run.event_count:
        raise InvalidBundle(
            f"{EVENTS_NAME} holds {reader.count} events, the manifest says "
            f"{manifest.run.event_count}"
        )
    if sorted(summary.versions) != manifest.event_schema_versions:
        raise InvalidBundle("event schema versions differ from the manifest's list")
    return reader.count, summary


def _check_blob(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, sha: str, scanner: SecretScanner | None
) -> None:
    """The blob's hash, and no secret in it (scanned across chunk boundaries)."""
    digest, scan = hashlib.sha256(), _StreamScan(scanner)
    for chunk in read_member(zf, info):
        digest.update(chunk)
        scan.check(chunk, lambda: f"member {show(blob_member(sha))}")
    if digest.hexdigest() != sha:
        raise _hash_mismatch(blob_member(sha))


def read_bundle(
    f: BinaryIO,
    label: str,
    checks: Checks,
    progress: ProgressFn | None = None,
    *,
    keep_events: bool = False,
) -> ValidatedBundle:
    """Check an open bundle file completely (see the module docstring); raises `InvalidBundle`."""
    report, limit = progress or quiet, checks.limit
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
    except (*ZIP_ERRORS, ValueError) as exc:
        raise InvalidBundle(f"{label} is not a valid zip archive ({exc})") from None
    with zf:
        entries = _check_entries(zf, label, limit)
        if entries[MANIFEST_NAME].file_size > MANIFEST_MAX_BYTES:
            raise InvalidBundle(f"{MANIFEST_NAME} is over {MANIFEST_MAX_BYTES:,} bytes")
        manifest = parse_manifest(b"".join(read_member(zf, entries[MANIFEST_NAME])))
        if manifest.run.event_count > checks.max_events:
            raise _too_many(checks.max_events, f"the manifest says {manifest.run.event_count:,}")
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
        count, summary = _read_events(
            zf, entries[EVENTS_NAME], manifest, checks, keep_events, report
        )
        blobs = sorted(m.sha256 for n, m in manifest.members.items() if n != EVENTS_NAME)
        for done, blob in enumerate(blobs, start=1):
            _check_blob(zf, entries[blob_member(blob)], blob, checks.scanner)
            report("checking blobs", done, len(blobs))
        traces = _receipt_refs(zf, entries, summary.refs.keys() & set(blobs))
    _check_blob_refs(summary.refs, set(blobs), traces)
    return ValidatedBundle(
        sha256=file_sha,
        size=size,
        manifest=manifest,
        event_count=count,
        blobs=blobs,
        events=tuple(summary.kept),
    )


def _receipt_refs(
    zf: zipfile.ZipFile, entries: dict[str, zipfile.ZipInfo], named: set[str]
) -> set[str]:
    """The trace blobs the receipts among the event-named blobs name (already hash-checked
    above; read again here, receipts only, each at most RECEIPT_MAX_BYTES)."""
    found: set[str] = set()
    for sha in sorted(named):
        info = entries[blob_member(sha)]
        if info.file_size > RECEIPT_MAX_BYTES:
            continue
        data = b"".join(read_member(zf, info))
        if hashlib.sha256(data).hexdigest() != sha:
            raise _hash_mismatch(blob_member(sha))
        found.update(receipt_trace_refs(data))
    return found


def _check_blob_refs(refs: dict[str, int], blobs: set[str], traces: set[str]) -> None:
    """Every blob an event names is a member; every member is named by an event or is the
    trace of a receipt member (a trace a receipt names may be absent: older bundles)."""
    for ref, seq in sorted(refs.items(), key=lambda item: item[1]):
        if ref not in blobs:
            raise InvalidBundle(f"event seq {seq} names blob {ref}, which is missing")
    unnamed = sorted(blobs - refs.keys() - traces)
    if unnamed:
        raise InvalidBundle(
            f"member {show(blob_member(unnamed[0]))} is not named by any event or receipt"
        )


@contextmanager
def open_bundle(path: Path) -> Iterator[BinaryIO]:
    """The bundle file, open for reading; a path that is missing or not a file is refused."""
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


def check_bundle(
    path: Path,
    limit: int,
    progress: ProgressFn | None = None,
    *,
    max_events: int = DEFAULT_MAX_EVENTS,
    keep_events: bool = True,
) -> ValidatedBundle:
    """Validate a bundle file without importing it (a dry run; the demo plays its events)."""
    path = Path(path)
    with open_bundle(path) as f:
        return read_bundle(
            f, str(path), Checks(limit, max_events), progress, keep_events=keep_events
        )
