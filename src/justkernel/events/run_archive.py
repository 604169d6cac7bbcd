"""The run archive format (the `.jkbundle` "session bundle"), shared by export and import:
member names, manifest, event lines.

An archive is one zip file (stored or deflated members) holding `manifest.json`, `events.jsonl`
and `blobs/<sha256>`. The rules live here once so the writer and the reader cannot drift apart;
`docs/replay-format.md` describes them for people. Export: `run_export.export_run`;
check: `run_archive_check.read_bundle`; import: `run_import.import_bundle`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from justkernel.events.model import EVENT_SCHEMA_VERSION, Event
from justkernel.jsonsafe import loads_bounded
from justkernel.store.blobs import SHA256_RE

if TYPE_CHECKING:
    from justkernel.events.log import EventLog
    from justkernel.settings.config import Settings
    from justkernel.settings.secrets import SecretsStore
    from justkernel.store import BlobStore, Database, RunRepository

FORMAT_NAME = "justkernel-bundle"
FORMAT_VERSION = 1
SUPPORTED_FORMAT_VERSIONS = frozenset({1})
MANIFEST_NAME = "manifest.json"
EVENTS_NAME = "events.jsonl"
BLOBS_PREFIX = "blobs/"
MANIFEST_MAX_BYTES = 64 * 1024 * 1024  # the manifest is read whole, so it has its own cap
CHUNK_BYTES = 1 << 16
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed member timestamps: same content, same member bytes

# Column limits of the store (store/schema.py): checked up front so an import never fails
# halfway through the database write.
MAX_KIND, MAX_TEAM, MAX_TS, MAX_RUN_ID, MAX_RUN_NAME = 64, 64, 40, 64, 200

EVENT_FIELDS = ("run_id", "seq", "kind", "team", "ts", "schema_version", "payload")
MANIFEST_FIELDS = frozenset(
    {
        "format",
        "format_version",
        "generator",
        "exported_at",
        "run",
        "event_schema_versions",
        "members",
    }
)
RUN_FIELDS = frozenset(
    {"id", "name", "mode", "created_at", "source_run_id", "event_count", "simulated", "meta"}
)
MEMBER_FIELDS = frozenset({"sha256", "size"})

ProgressFn = Callable[[str, int, int], None]
"""Progress callback: (stage, done, total). Called often; must be cheap."""


class ArchiveServices(Protocol):
    """What export and import use of the lab. `lab.Lab` has these fields; typing them here,
    rather than importing `Lab`, keeps the event log below the services bundle (no cycle)."""

    settings: Settings
    db: Database
    runs: RunRepository
    events: EventLog
    blobs: BlobStore
    secrets: SecretsStore


class BundleError(Exception):
    """A bundle could not be written or read. The message is one line, fit for the user."""


class InvalidBundle(BundleError):
    """Import refused: the file is not a valid bundle. Nothing was changed."""


class ExportRefused(BundleError):
    """Export refused (a secret, a missing blob, over the size limit). No file was written."""


class SecretInExport(ExportRefused):
    """A known secret value appears in what would be exported; the message never shows it."""


def show(value: object, limit: int = 80) -> str:
    """A name or value for a one-line message: quoted, escaped, shortened."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def blob_member(sha256: str) -> str:
    return f"{BLOBS_PREFIX}{sha256}"


def check_member_name(name: str) -> None:
    """Refuse anything but the three kinds of members, and name the exact problem."""
    if "\\" in name:
        raise InvalidBundle(f"member {show(name)} has a backslash in its name")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise InvalidBundle(f"member {show(name)} has an absolute path")
    if ".." in name.split("/"):
        raise InvalidBundle(f"member {show(name)} points outside the bundle ('..')")
    if "\x00" in name or any(ord(c) < 32 for c in name):
        raise InvalidBundle(f"member {show(name)} has a control character in its name")


def is_known_member(name: str) -> bool:
    if name in (MANIFEST_NAME, EVENTS_NAME):
        return True
    return name.startswith(BLOBS_PREFIX) and bool(SHA256_RE.match(name[len(BLOBS_PREFIX) :]))


@dataclass(frozen=True, slots=True)
class MemberInfo:
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The exported run as the manifest describes it."""

    id: str
    name: str
    mode: str
    created_at: str
    source_run_id: str  # the run the events were first recorded in (kept across re-exports)
    event_count: int
    simulated: bool
    meta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Manifest:
    format_version: int
    generator: str
    exported_at: str
    run: RunInfo
    event_schema_versions: list[int]
    members: dict[str, MemberInfo]

    def to_bytes(self) -> bytes:
        doc = {
            "format": FORMAT_NAME,
            "format_version": self.format_version,
            "generator": self.generator,
            "exported_at": self.exported_at,
            "run": dataclasses.asdict(self.run),
            "event_schema_versions": self.event_schema_versions,
            "members": {
                name: {"sha256": m.sha256, "size": m.size}
                for name, m in sorted(self.members.items())
            },
        }
        return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _want(cond: bool, message: str) -> None:
    if not cond:
        raise InvalidBundle(f"manifest.json: {message}")


def _is_int(value: Any) -> bool:
    return type(value) is int


def _short_str(value: Any, limit: int) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit and "\x00" not in value


def _exact_keys(obj: dict[str, Any], expected: frozenset[str], where: str) -> None:
    missing = sorted(expected - obj.keys())
    unknown = sorted(obj.keys() - expected)
    _want(not missing, f"{where} lacks {', '.join(missing)}")
    _want(not unknown, f"{where} has unknown fields {', '.join(map(show, unknown))}")


def parse_manifest(data: bytes) -> Manifest:
    """Strictly parse and check a manifest; format name and version first, for a clear refusal."""
    try:
        doc = loads_bounded(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidBundle(f"manifest.json is not valid UTF-8 JSON ({exc})") from None
    _want(isinstance(doc, dict), "not a JSON object")
    fmt = doc.get("format")
    if fmt != FORMAT_NAME:
        raise InvalidBundle(
            f"not a JustKernel bundle: format is {show(fmt)}, expected {FORMAT_NAME!r}"
        )
    version = doc.get("format_version")
    if not _is_int(version) or version not in SUPPORTED_FORMAT_VERSIONS:
        supported = ", ".join(map(str, sorted(SUPPORTED_FORMAT_VERSIONS)))
        raise InvalidBundle(
            f"bundle format version {show(version)} is not supported (this JustKernel reads "
            f"{supported}); a newer bundle needs a newer JustKernel"
        )
    _exact_keys(doc, MANIFEST_FIELDS, "the manifest")
    _want(isinstance(doc["generator"], str), "generator must be a string")
    _want(_short_str(doc["exported_at"], MAX_TS), "exported_at must be a timestamp string")
    run = doc["run"]
    _want(isinstance(run, dict), "run must be an object")
    _exact_keys(run, RUN_FIELDS, "run")
    _want(_short_str(run["id"], MAX_RUN_ID), "run.id must be a string of 1-64 characters")
    _want(_short_str(run["source_run_id"], MAX_RUN_ID), "run.source_run_id: 1-64 characters")
    _want(_short_str(run["name"], MAX_RUN_NAME), "run.name must be 1-200 characters")
    _want(_short_str(run["mode"], 16), "run.mode must be a short string")
    _want(_short_str(run["created_at"], MAX_TS), "run.created_at must be a timestamp string")
    _want(_is_int(run["event_count"]) and run["event_count"] >= 0, "run.event_count: int >= 0")
    _want(isinstance(run["simulated"], bool), "run.simulated must be true or false")
    _want(isinstance(run["meta"], dict), "run.meta must be an object")
    versions = doc["event_schema_versions"]
    _want(
        isinstance(versions, list) and all(_is_int(v) for v in versions),
        "event_schema_versions must be a list of integers",
    )
    for v in versions:
        if not 1 <= v <= EVENT_SCHEMA_VERSION:
            raise InvalidBundle(
                f"events use schema version {v}, this JustKernel reads 1-{EVENT_SCHEMA_VERSION}"
            )
    members = doc["members"]
    _want(isinstance(members, dict), "members must be an object")
    parsed: dict[str, MemberInfo] = {}
    for name, info in members.items():
        _want(name != MANIFEST_NAME, "the manifest must not list itself")
        _want(is_known_member(name), f"lists an unexpected member {show(name)}")
        _want(isinstance(info, dict), f"member {show(name)} must be an object")
        _exact_keys(info, MEMBER_FIELDS, f"member {show(name)}")
        sha, size = info["sha256"], info["size"]
        _want(isinstance(sha, str) and bool(SHA256_RE.match(sha)), f"{show(name)}: bad sha256")
        _want(_is_int(size) and size >= 0, f"member {show(name)}: size must be an int >= 0")
        if name.startswith(BLOBS_PREFIX):
            _want(name == blob_member(sha), f"{show(name)} is not named by its sha256")
        parsed[name] = MemberInfo(sha256=sha, size=size)
    _want(EVENTS_NAME in parsed, f"does not list {EVENTS_NAME}")
    return Manifest(
        format_version=version,
        generator=doc["generator"],
        exported_at=doc["exported_at"],
        run=RunInfo(**run),
        event_schema_versions=sorted(set(versions)),
        members=parsed,
    )


def encode_event_line(event: Event, run_id: str) -> bytes:
    """One events.jsonl line: `Event.to_json()` under the bundle's run id, payload verbatim."""
    line = dataclasses.replace(event, run_id=run_id).to_json()
    if "\n" in line:
        raise ExportRefused(
            f"event seq {event.seq}: its stored payload has a raw line break and cannot be "
            "written as one JSON line without changing its bytes"
        )
    try:
        return line.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        raise ExportRefused(f"event seq {event.seq}: payload is not valid Unicode") from None


def _bad_line(seq: int, message: str) -> InvalidBundle:
    return InvalidBundle(f"{EVENTS_NAME} line {seq}: {message}")


def decode_event_line(raw: bytes, seq: int, run_id: str) -> Event:
    """Parse and check line `seq` (1-based); the payload text is kept exactly as written.

    The line must be exactly what `encode_event_line` writes, so importing and re-exporting
    reproduces it byte for byte.
    """
    try:
        text = raw.decode("utf-8")
        obj = loads_bounded(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad_line(seq, f"not valid UTF-8 JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise _bad_line(seq, "not a JSON object")
    missing = [f for f in EVENT_FIELDS if f not in obj]
    unknown = sorted(set(obj) - set(EVENT_FIELDS))
    if missing or unknown:
        detail = f"missing {', '.join(missing)}" if missing else ""
        detail += ("; " if detail and unknown else "") + (
            f"unknown fields {', '.join(map(show, unknown))}" if unknown else ""
        )
        raise _bad_line(seq, detail)
    if not _is_int(obj["seq"]) or obj["seq"] != seq:
        raise _bad_line(seq, f"seq is {show(obj['seq'])}; events must be numbered 1, 2, 3, ...")
    if obj["run_id"] != run_id:
        raise _bad_line(seq, "run_id differs from the manifest's run.source_run_id")
    if not _short_str(obj["kind"], MAX_KIND):
        raise _bad_line(seq, "kind must be a string of 1-64 characters")
    if obj["team"] is not None and not _short_str(obj["team"], MAX_TEAM):
        raise _bad_line(seq, "team must be null or a string of 1-64 characters")
    if not _short_str(obj["ts"], MAX_TS):
        raise _bad_line(seq, "ts must be a timestamp string")
    version = obj["schema_version"]
    if not _is_int(version) or not 1 <= version <= EVENT_SCHEMA_VERSION:
        raise _bad_line(seq, f"schema_version {show(version)} is not supported")
    if not isinstance(obj["payload"], dict):
        raise _bad_line(seq, "payload must be a JSON object")
    head = Event(run_id, seq, obj["kind"], obj["team"], obj["ts"], version, "").to_json()[:-1]
    if not text.startswith(head) or not text.endswith("}"):
        raise _bad_line(seq, "not in the canonical form JustKernel writes")
    payload_json = text[len(head) : -1]
    try:
        payload = loads_bounded(payload_json)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise _bad_line(seq, "not in the canonical form JustKernel writes")
    return Event(run_id, seq, obj["kind"], obj["team"], obj["ts"], version, payload_json)


def blob_refs(event: Event, error: type[BundleError]) -> list[str]:
    """The blobs an event names, each checked to be a SHA-256 (else `error` is raised)."""
    refs = event.blob_refs()
    for ref in refs:
        if not SHA256_RE.match(ref):
            raise error(f"event seq {event.seq} names blob {show(ref)}, which is not a SHA-256")
    return refs


RECEIPT_MAX_BYTES = 16 * 1024 * 1024  # a receipt is ~20 KB; a larger blob is not read as one


def receipt_trace_refs(data: bytes) -> list[str]:
    """The blobs a receipt blob names for its perf cases (`cycles[].logs[].sha256`: the
    ascendc-cpu trace of each case), so the pipeline view of a replay has them. Any other blob
    (a source archive, a log, a non-receipt JSON) names none; a malformed name is ignored (the
    receipt is data, not the format)."""
    if len(data) > RECEIPT_MAX_BYTES or data[:1] != b"{":
        return []
    try:
        receipt = loads_bounded(data)
    except ValueError:
        return []
    if not isinstance(receipt, dict) or "job_key" not in receipt:
        return []
    cycles = receipt.get("cycles")
    refs: list[str] = []
    for cycle in cycles if isinstance(cycles, list) else []:
        logs = cycle.get("logs") if isinstance(cycle, dict) else None
        for log in logs if isinstance(logs, list) else []:
            sha = log.get("sha256") if isinstance(log, dict) else None
            if isinstance(sha, str) and SHA256_RE.match(sha) and sha not in refs:
                refs.append(sha)
    return refs
