"""Export one run as a self-contained bundle, refusing rather than leaking a secret.

Two passes: the first reads, hashes and scans everything that would go into the bundle (events,
blobs, manifest) before a byte is written; the second writes a temp file beside the target and
renames it into place only when complete, so a refusal or a crash never leaves a half bundle.
Event bytes are never altered: an event that carries a secret stops the export.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from justkernel import __version__
from justkernel.events.run_archive import (
    CHUNK_BYTES,
    EVENTS_NAME,
    FORMAT_VERSION,
    MANIFEST_MAX_BYTES,
    MANIFEST_NAME,
    MAX_RUN_ID,
    ZIP_TIME,
    ArchiveServices,
    ExportRefused,
    InvalidBundle,
    Manifest,
    MemberInfo,
    ProgressFn,
    RunInfo,
    SecretInExport,
    blob_member,
    blob_refs,
    decode_event_line,
    encode_event_line,
    parse_manifest,
    receipt_trace_refs,
)
from justkernel.settings import redaction
from justkernel.settings.secrets import SecretsError, SecretsStore
from justkernel.store.runs import Run, utc_now_iso

MIN_SECRET_LENGTH = 6  # as in `redaction`: shorter values would match ordinary text
REDACTION_SPAN = 512  # longest token `redaction` matches in a stream, with room to spare
PROGRESS_EVERY = 1000


@dataclass(frozen=True, slots=True)
class ExportResult:
    path: Path
    sha256: str  # of the bundle file
    size: int
    run_id: str
    source_run_id: str
    event_count: int
    blob_count: int


class SecretScanner:
    """Finds known secret values in bytes: the lab's stored secrets, raw and JSON-escaped (as
    they would sit inside an event payload), and any value `redaction` knows in this process."""

    def __init__(self, values: dict[str, str]) -> None:
        self._needles: list[tuple[str, bytes]] = []
        for name, value in sorted(values.items()):
            if len(value) < MIN_SECRET_LENGTH:
                continue
            forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
            self._needles.extend((name, form.encode("utf-8", "replace")) for form in forms)

    @classmethod
    def from_store(cls, store: SecretsStore) -> SecretScanner:
        """Refuses (rather than skip the check) when the store cannot be read."""
        values: dict[str, str] = {}
        try:
            for name in store.names():
                secret = store.get(name)
                if secret is not None:
                    values[name] = secret.reveal()
        except SecretsError as exc:
            raise ExportRefused(f"cannot check for secrets: {exc}") from None
        return cls(values)

    @property
    def overlap(self) -> int:
        """Bytes a scan of a stream must carry from one chunk to the next so no value (and no
        token `redaction` recognises) is missed across the boundary."""
        return max([len(needle) for _name, needle in self._needles] + [REDACTION_SPAN]) - 1

    def find(self, data: bytes) -> str | None:
        """What was found, said without the value; None when clean."""
        for name, needle in self._needles:
            if needle in data:
                return f"the value of stored secret {name!r}"
        text = data.decode("utf-8", "replace")
        if redaction.scrub(text) != text:
            return "a known secret value"
        return None


def _quiet(_stage: str, _done: int, _total: int) -> None:
    return None


def _zip_info(name: str, size: int = 0) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3
    info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
    info.file_size = size  # lets zipfile choose ZIP64 up front for a streamed member
    return info


def _origin_id(run: Run) -> str:
    """Events keep the id of the run they were first recorded in, so re-exports match."""
    source = run.meta.get("source_run_id")
    if isinstance(source, str) and 0 < len(source) <= MAX_RUN_ID:
        return source
    return run.id


def _target(output: Path, overwrite: bool) -> Path:
    output = Path(output).expanduser().absolute()
    if output.is_dir():
        raise ExportRefused(f"{output} is a folder; give a file name")
    if output.exists() and not overwrite:
        raise ExportRefused(f"{output} already exists (use --force to replace it)")
    if not output.parent.is_dir():
        raise ExportRefused(f"folder {output.parent} does not exist")
    return output


def _too_big(what: str, size: int, limit: int) -> ExportRefused:
    return ExportRefused(
        f"{what} is over {size:,} bytes, more than the bundle limit of {limit:,} bytes "
        "(JUSTKERNEL_EXPORT_MAX_BYTES)"
    )


def _importable(check: Callable[..., object], *args: object, where: str) -> None:
    """Run the importer's own check: never write a bundle this lab would refuse to read."""
    try:
        check(*args)
    except InvalidBundle as exc:
        raise ExportRefused(f"{where} cannot be exported: {exc}") from None


@dataclass
class _Plan:
    """What the first pass learned: member hashes and sizes, and where each blob is named."""

    events: MemberInfo
    count: int
    versions: set[int]
    blob_seq: dict[str, int]  # sha256 -> first event seq naming it
    blobs: dict[str, MemberInfo]


async def _scan_events(
    lab: ArchiveServices,
    run: Run,
    origin: str,
    scanner: SecretScanner,
    limit: int,
    report: ProgressFn,
) -> _Plan:
    digest, size, count = hashlib.sha256(), 0, 0
    versions: set[int] = set()
    blob_seq: dict[str, int] = {}
    async for event in lab.events.iter_all(run.id):
        if event.seq > run.last_seq:
            break
        count += 1
        if event.seq != count:
            raise ExportRefused(f"run {run.id} has no event seq {count}; its log has a gap")
        line = encode_event_line(event, origin)
        found = scanner.find(line)
        if found:
            raise SecretInExport(
                f"event seq {event.seq} contains {found}; a bundle must carry no secret, "
                "so nothing was exported"
            )
        _importable(decode_event_line, line[:-1], count, origin, where=f"event seq {count}")
        digest.update(line)
        size += len(line)
        if size > limit:
            raise _too_big(EVENTS_NAME, size, limit)
        for ref in blob_refs(event, ExportRefused):
            blob_seq.setdefault(ref, event.seq)
        versions.add(event.schema_version)
        if count % PROGRESS_EVERY == 0:
            report("checking events", count, run.last_seq)
    if count != run.last_seq:
        raise ExportRefused(
            f"run {run.id} has {count} events but its sequence is at {run.last_seq}"
        )
    report("checking events", count, count)
    events = MemberInfo(sha256=digest.hexdigest(), size=size)
    return _Plan(events=events, count=count, versions=versions, blob_seq=blob_seq, blobs={})


async def _read_blob(lab: ArchiveServices, sha: str, seq: int) -> bytes:
    try:
        return await asyncio.to_thread(lab.blobs.get, sha)
    except FileNotFoundError:
        raise ExportRefused(
            f"event seq {seq} names blob {sha}, which is not in the blob store"
        ) from None
    except ValueError as exc:  # the store found the bytes no longer match their name
        raise ExportRefused(f"{exc} (named by event seq {seq})") from None


async def _scan_blobs(
    lab: ArchiveServices,
    plan: _Plan,
    scanner: SecretScanner,
    limit: int,
    report: ProgressFn,
    trace_receipts: Collection[str] | None,
) -> None:
    """Every blob an event names, then the trace blobs those receipts name (their
    `cycles[].logs`) that this lab holds: a replay's pipeline view reads them. With
    `trace_receipts`, only the receipts of those blob names bring their traces."""
    total = plan.events.size
    traces: dict[str, int] = {}
    for done, (sha, seq) in enumerate(sorted(plan.blob_seq.items()), start=1):
        data = await _read_blob(lab, sha, seq)
        total = _add_blob(plan, scanner, sha, seq, data, total, limit)
        if trace_receipts is not None and sha not in trace_receipts:
            continue
        for ref in receipt_trace_refs(data):
            if ref not in plan.blob_seq:
                traces.setdefault(ref, seq)
        report("checking blobs", done, len(plan.blob_seq))
    for sha, seq in sorted(traces.items()):
        if not await asyncio.to_thread(lab.blobs.has, sha):
            continue  # not kept here (an older import): the replay shows the figures only
        data = await _read_blob(lab, sha, seq)
        total = _add_blob(plan, scanner, sha, seq, data, total, limit)
        plan.blob_seq[sha] = seq


def _add_blob(
    plan: _Plan, scanner: SecretScanner, sha: str, seq: int, data: bytes, total: int, limit: int
) -> int:
    found = scanner.find(data)
    if found:
        raise SecretInExport(
            f"blob {sha} (named by event seq {seq}) contains {found}; a bundle must carry "
            "no secret, so nothing was exported"
        )
    total += len(data)
    if total > limit:
        raise _too_big("the bundle's content", total, limit)
    plan.blobs[blob_member(sha)] = MemberInfo(sha256=sha, size=len(data))
    return total


async def _write(
    lab: ArchiveServices,
    run: Run,
    origin: str,
    plan: _Plan,
    manifest: bytes,
    tmp: Path,
    report: ProgressFn,
) -> None:
    with tmp.open("xb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_zip_info(MANIFEST_NAME), manifest)
        digest, written = hashlib.sha256(), 0
        with zf.open(_zip_info(EVENTS_NAME, plan.events.size), "w") as out:
            async for event in lab.events.iter_all(run.id):
                if event.seq > plan.count:
                    break
                line = encode_event_line(event, origin)
                digest.update(line)
                out.write(line)
                written += 1
                if written % PROGRESS_EVERY == 0:
                    report("writing events", written, plan.count)
        if digest.hexdigest() != plan.events.sha256:
            raise ExportRefused(f"the events of run {run.id} changed during export; try again")
        report("writing events", written, plan.count)
        for done, (sha, seq) in enumerate(sorted(plan.blob_seq.items()), start=1):
            data = await _read_blob(lab, sha, seq)
            await asyncio.to_thread(zf.writestr, _zip_info(blob_member(sha)), data)
            report("writing blobs", done, len(plan.blob_seq))
        zf.close()
        raw.flush()
        os.fsync(raw.fileno())


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _sync_folder(folder: Path) -> None:
    """Make the rename durable too (best effort: not every filesystem allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


async def export_run(
    lab: ArchiveServices,
    run_id: str,
    output: Path,
    *,
    overwrite: bool = False,
    progress: ProgressFn | None = None,
    trace_receipts: Collection[str] | None = None,
) -> ExportResult:
    """Write run `run_id` to `output` as one bundle; raises `ExportRefused` (no file written)
    or `UnknownRun`. `trace_receipts` (receipt blob names) keeps the pipeline traces of those
    receipts only, e.g. each team's best for a small demo bundle; None keeps every trace."""
    report = progress or _quiet
    run = await lab.runs.get(run_id)
    output = _target(output, overwrite)
    limit = lab.settings.export_max_bytes
    origin = _origin_id(run)
    scanner = await asyncio.to_thread(SecretScanner.from_store, lab.secrets)

    plan = await _scan_events(lab, run, origin, scanner, limit, report)
    await _scan_blobs(lab, plan, scanner, limit, report, trace_receipts)
    simulated = run.mode == "demo" or run.meta.get("simulated") is True
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        generator=f"justkernel {__version__}",
        exported_at=utc_now_iso(),
        run=RunInfo(
            id=run.id,
            name=run.name,
            mode=run.mode,
            created_at=run.created_at,
            source_run_id=origin,
            event_count=plan.count,
            simulated=simulated,
            meta=run.meta,
        ),
        event_schema_versions=sorted(plan.versions),
        members={EVENTS_NAME: plan.events, **plan.blobs},
    ).to_bytes()
    found = scanner.find(manifest)
    if found:
        raise SecretInExport(f"the run's name or metadata contains {found}; nothing was exported")
    _importable(parse_manifest, manifest, where="the run's metadata")
    if len(manifest) > MANIFEST_MAX_BYTES:
        raise _too_big(MANIFEST_NAME, len(manifest), MANIFEST_MAX_BYTES)
    total = len(manifest) + plan.events.size + sum(m.size for m in plan.blobs.values())
    if total > limit:
        raise _too_big("the bundle's content", total, limit)

    tmp = output.with_name(f".{output.name}.{secrets.token_hex(4)}.partial")
    try:
        await _write(lab, run, origin, plan, manifest, tmp, report)
        size = tmp.stat().st_size
        if size > limit:
            raise _too_big("the bundle file", size, limit)
        sha = await asyncio.to_thread(_file_sha256, tmp)
        os.replace(tmp, output)
        _sync_folder(output.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ExportResult(
        path=output,
        sha256=sha,
        size=size,
        run_id=run.id,
        source_run_id=origin,
        event_count=plan.count,
        blob_count=len(plan.blobs),
    )
