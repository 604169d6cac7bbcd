"""Session bundles on real SQLite and PostgreSQL: byte-exact round trips, refusals, no secrets."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from sqlalchemy import func, select
from typer.testing import CliRunner

from justkernel.cli import bundle_cmds
from justkernel.events import Event, ReadOnlyRun
from justkernel.events import run_import as run_import_module
from justkernel.events.run_archive import (
    EVENTS_NAME,
    MANIFEST_NAME,
    ExportRefused,
    InvalidBundle,
    SecretInExport,
)
from justkernel.events.run_export import export_run
from justkernel.events.run_import import import_bundle
from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings
from justkernel.store.runs import Run
from justkernel.store.schema import events as events_table

BIG_BLOB = b"\0" * 300_000  # compresses to almost nothing: the zip-bomb material


async def seed_run(lab: Lab, *, simulated: bool = False, extra: str = "") -> Run:
    """A run with hand-written (non-canonical) payload text, unicode, teams and blobs."""
    meta = {"operator": "confusion_mul_grad", "simulated": simulated}
    run = await lab.runs.create("contest day 1", meta=meta)
    source = lab.blobs.put(b"int kernel(void) { return 0; }\n" + extra.encode())
    binary = lab.blobs.put(bytes(range(256)) * 40)
    big = lab.blobs.put(BIG_BLOB)
    odd = [
        Event(run.id, 1, "run.started", None, "2025-01-01T00:00:00.000001+00:00", 1,
              '{"b": 2, "a": "é\\u00e9"}'),
        Event(run.id, 2, "note", "team-α", "2025-01-01T00:00:01.000000+00:00", 1,
              '{ "text" : "line\\nbreak", "blobs": ["' + big + '"] }'),
    ]  # fmt: skip
    await lab.events.insert_verbatim(run.id, odd)
    for i in range(25):
        payload: dict[str, Any] = {"i": i, "cycles": 1000 - i, "blobs": [source]}
        if i % 5 == 0:
            payload["blobs"].append(binary)
            payload["note"] = '测试 ✓ "quoted" \\ back'
        await lab.events.append(run.id, "experiment.result", payload, team=f"team-{i % 4}")
    return await lab.runs.get(run.id)


async def all_events(lab: Lab, run_id: str) -> list[Event]:
    return [e async for e in lab.events.iter_all(run_id)]


async def snapshot(lab: Lab) -> tuple[list[dict[str, Any]], int, list[str]]:
    """What an import could change: the runs table, the events count, the blob files."""
    runs = [r.to_dict() for r in await lab.runs.list()]
    async with lab.db.reader.connect() as conn:
        count = (await conn.execute(select(func.count()).select_from(events_table))).scalar_one()
    blobs = sorted(p.name for p in lab.blobs.folder.rglob("*") if p.is_file())
    return runs, count, blobs


def drop_blobs(lab: Lab, shas: set[str]) -> None:
    for sha in shas:
        lab.blobs.path(sha).unlink()


def members_of(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def with_manifest(members: dict[str, bytes], change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(members[MANIFEST_NAME])
    change(doc)
    members[MANIFEST_NAME] = json.dumps(doc).encode()


def rehash(members: dict[str, bytes]) -> None:
    """Make the manifest agree with the members again (a forger who recomputes hashes)."""

    def fix(doc: dict[str, Any]) -> None:
        for name in doc["members"]:
            data = members[name]
            doc["members"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}

    with_manifest(members, fix)


def patch_declared_size(path: Path, name: str, size: int) -> None:
    """Rewrite a member's uncompressed size in its local header and central directory."""
    data = bytearray(path.read_bytes())
    raw = name.encode()
    local = data.find(raw) - 30
    central = data.find(b"PK\x01\x02", local)
    central = data.find(raw, central) - 46
    assert data[local : local + 4] == b"PK\x03\x04" and data[central : central + 4] == b"PK\x01\x02"
    data[local + 22 : local + 26] = size.to_bytes(4, "little")
    data[central + 24 : central + 28] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))


def blob_names(members: dict[str, bytes]) -> list[str]:
    return sorted(n for n in members if n.startswith("blobs/"))


def big_blob_name() -> str:
    return f"blobs/{hashlib.sha256(BIG_BLOB).hexdigest()}"


# --- round trip -------------------------------------------------------------------------------


async def test_round_trip_is_byte_exact_and_carries_the_blobs(lab: Lab, tmp_path: Path) -> None:
    run = await seed_run(lab, simulated=True)
    original = await all_events(lab, run.id)
    shas = {ref for e in original for ref in e.blob_refs()}
    exported = await export_run(lab, run.id, tmp_path / "a.jkbundle")
    assert exported.event_count == 27 and exported.blob_count == 3
    assert exported.sha256 == hashlib.sha256(exported.path.read_bytes()).hexdigest()
    manifest = json.loads(members_of(exported.path)[MANIFEST_NAME])
    assert manifest["format"] == "justkernel-bundle" and manifest["format_version"] == 1
    assert manifest["run"]["source_run_id"] == run.id and manifest["run"]["simulated"] is True
    assert manifest["run"]["event_count"] == 27

    drop_blobs(lab, shas)  # the import must bring them back from the bundle
    imported = await import_bundle(lab, exported.path)
    new = imported.run
    assert new.id != run.id and new.mode == "replay" and new.read_only and new.last_seq == 27
    assert new.meta["source_run_id"] == run.id
    assert new.meta["bundle_sha256"] == exported.sha256 and new.meta["imported_at"]
    assert new.meta["simulated"] is True and new.meta["operator"] == "confusion_mul_grad"
    copied = await all_events(lab, new.id)
    assert [e.payload_json for e in copied] == [e.payload_json for e in original]
    assert [e.to_json().replace(new.id, run.id) for e in copied] == [e.to_json() for e in original]
    for sha in shas:
        assert hashlib.sha256(lab.blobs.get(sha)).hexdigest() == sha
    with pytest.raises(ReadOnlyRun):
        await lab.events.append(new.id, "x", {})

    again = await export_run(lab, new.id, tmp_path / "b.jkbundle")
    first, second = members_of(exported.path), members_of(again.path)
    assert second[EVENTS_NAME] == first[EVENTS_NAME]
    assert blob_names(second) == blob_names(first)
    assert json.loads(second[MANIFEST_NAME])["run"]["source_run_id"] == run.id


async def test_empty_run_round_trips(lab: Lab, tmp_path: Path) -> None:
    run = await lab.runs.create("nothing yet")
    exported = await export_run(lab, run.id, tmp_path / "empty.jkbundle")
    imported = await import_bundle(lab, exported.path, name="empty copy")
    assert imported.event_count == 0 and imported.run.name == "empty copy"


async def test_export_never_leaves_a_partial_file_and_will_not_clobber(
    lab: Lab, tmp_path: Path
) -> None:
    run = await seed_run(lab)
    target = tmp_path / "out.jkbundle"
    target.write_text("keep me")
    with pytest.raises(ExportRefused, match="already exists"):
        await export_run(lab, run.id, target)
    assert target.read_text() == "keep me"
    lab.settings = lab.settings.model_copy(update={"export_max_bytes": 50_000})
    with pytest.raises(ExportRefused, match="JUSTKERNEL_EXPORT_MAX_BYTES"):
        await export_run(lab, run.id, target, overwrite=True)
    assert target.read_text() == "keep me"

    def crash(stage: str, _done: int, _total: int) -> None:
        if stage == "writing blobs":
            raise KeyboardInterrupt  # as if the process were stopped halfway through the file

    lab.settings = lab.settings.model_copy(update={"export_max_bytes": 10_000_000})
    with pytest.raises(KeyboardInterrupt):
        await export_run(lab, run.id, target, overwrite=True, progress=crash)
    assert target.read_text() == "keep me"
    assert files_in(tmp_path) == ["out.jkbundle"]


async def test_export_refuses_what_import_would_refuse(lab: Lab, tmp_path: Path) -> None:
    ts = "2025-01-01T00:00:00.000000+00:00"
    cases = {
        "raw line break": ("ok", Event("", 1, "note", None, ts, 1, '{"a":\n1}')),
        "not a SHA-256": ("ok", Event("", 1, "note", None, ts, 1, '{"blobs":["abc"]}')),
        "is not in the blob store": (
            "ok",
            Event("", 1, "note", None, ts, 1, '{"blobs":["' + "c" * 64 + '"]}'),
        ),
        "run.name must be": ("", Event("", 1, "note", None, ts, 1, "{}")),
    }
    for expected, (name, event) in cases.items():
        run = await lab.runs.create(name)
        await lab.events.insert_verbatim(run.id, [event])
        with pytest.raises(ExportRefused, match=expected):
            await export_run(lab, run.id, tmp_path / "x.jkbundle")
    assert files_in(tmp_path) == []


async def test_a_failed_database_write_leaves_no_run(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = await seed_run(lab)
    exported = await export_run(lab, run.id, tmp_path / "a.jkbundle")
    before = await snapshot(lab)
    monkeypatch.setattr(run_import_module, "INSERT_BATCH", 5)

    def explode(stage: str, done: int, _total: int) -> None:
        if stage == "loading events" and done >= 10:  # two batches are already inserted
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        await import_bundle(lab, exported.path, progress=explode)
    assert await snapshot(lab) == before


# --- refusals ---------------------------------------------------------------------------------


def _symlink(members: dict[str, bytes], path: Path) -> Path:
    write_zip(path, members)
    with zipfile.ZipFile(path, "a") as zf:
        info = zipfile.ZipInfo("blobs/" + "a" * 64)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    return path


def _tamper_events(members: dict[str, bytes]) -> None:
    members[EVENTS_NAME] = members[EVENTS_NAME].replace(b'"cycles":1000', b'"cycles":1001')


def _tamper_blob(members: dict[str, bytes]) -> None:
    members[big_blob_name()] = b"\1" + members[big_blob_name()][1:]


def _renumber(members: dict[str, bytes]) -> None:
    members[EVENTS_NAME] = members[EVENTS_NAME].replace(b'"seq":3,', b'"seq":4,', 1)
    rehash(members)


def _unnamed_blob(members: dict[str, bytes]) -> None:
    name = "blobs/" + hashlib.sha256(b"x").hexdigest()
    members[name] = b"x"
    with_manifest(members, lambda doc: doc["members"].update({name: {}}))
    rehash(members)


def _unknown_field(members: dict[str, bytes]) -> None:
    lines = members[EVENTS_NAME].split(b"\n")
    lines[0] = lines[0].replace(b'{"run_id"', b'{"admin":true,"run_id"', 1)
    members[EVENTS_NAME] = b"\n".join(lines)
    rehash(members)


def _zip_bomb(members: dict[str, bytes], path: Path) -> Path:
    """A member whose declared size (zip headers and manifest) lies: it inflates far beyond."""
    with_manifest(members, lambda doc: doc["members"][big_blob_name()].update(size=1000))
    write_zip(path, members)
    patch_declared_size(path, big_blob_name(), 1000)
    return path


def _duplicate(members: dict[str, bytes], path: Path) -> Path:
    write_zip(path, members)
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "a") as zf:
        zf.writestr(EVENTS_NAME, members[EVENTS_NAME])
    return path


Case = tuple[Callable[[dict[str, bytes], Path, bytes], Path], str]


def edit(change: Callable[[dict[str, bytes]], None]) -> Callable[..., Path]:
    def build(members: dict[str, bytes], path: Path, _raw: bytes) -> Path:
        change(members)
        return write_zip(path, members)

    return build


def add(name: str, data: bytes = b"x") -> Callable[..., Path]:
    return edit(lambda m: m.__setitem__(name, data))


def raw(make: Callable[[bytes], bytes]) -> Callable[..., Path]:
    def build(_members: dict[str, bytes], path: Path, original: bytes) -> Path:
        path.write_bytes(make(original))
        return path

    return build


CASES: dict[str, Case] = {
    "truncated": (raw(lambda b: b[: len(b) // 2]), "truncated"),
    "truncated-tail": (raw(lambda b: b[:-7]), "truncated"),
    "trailing-junk": (raw(lambda b: b + b"junk"), "truncated"),
    "not-a-zip": (raw(lambda _b: b"hello, I am a text file\n"), "not a zip archive"),
    "empty-file": (raw(lambda _b: b""), "is empty"),
    "foreign-zip": (
        raw(lambda _b: _foreign_zip()),
        "not a JustKernel bundle (no manifest.json)",
    ),
    "other-format": (
        edit(lambda m: with_manifest(m, lambda d: d.update(format="other-bundle"))),
        "format is 'other-bundle'",
    ),
    "newer-version": (
        edit(lambda m: with_manifest(m, lambda d: d.update(format_version=99))),
        "version 99 is not supported",
    ),
    "tampered-events": (edit(_tamper_events), "events.jsonl' does not match its SHA-256"),
    "tampered-blob": (edit(_tamper_blob), "does not match its SHA-256"),
    "extra-member": (add("blobs/" + "b" * 64), "is not listed in the manifest"),
    "extra-unknown-name": (add("notes.txt"), "unexpected member 'notes.txt'"),
    "missing-member": (
        edit(lambda m: m.pop(big_blob_name())),
        "is listed in the manifest but missing",
    ),
    "traversal": (add("../x"), "points outside the bundle"),
    "nested-traversal": (add("blobs/../../x"), "points outside the bundle"),
    "absolute-path": (add("/etc/cron.d/x"), "absolute path"),
    "backslash": (add("blobs\\..\\x"), "backslash"),
    "symlink": (lambda m, p, _r: _symlink(m, p), "symbolic link"),
    "duplicate": (lambda m, p, _r: _duplicate(m, p), "appears twice"),
    "zip-bomb": (lambda m, p, _r: _zip_bomb(m, p), "corrupt or truncated"),
    "seq-gap": (edit(_renumber), "events must be numbered 1, 2, 3"),
    "unknown-event-field": (edit(_unknown_field), "unknown fields 'admin'"),
    "unnamed-blob": (edit(_unnamed_blob), "is not named by any event"),
}


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def _foreign_zip() -> bytes:
    path = Path(f"foreign-{secrets.token_hex(3)}.zip")
    write_zip(path, {"readme.txt": b"hello", "data/values.csv": b"1,2,3\n"})
    return path.read_bytes()


async def test_bad_bundles_are_refused_and_change_nothing(lab: Lab, tmp_path: Path) -> None:
    """Every case on one lab (fast); each must fail with its own one-line message."""
    run = await seed_run(lab)
    exported = await export_run(lab, run.id, tmp_path / "good.jkbundle")
    original = exported.path.read_bytes()
    drop_blobs(lab, {ref for e in await all_events(lab, run.id) for ref in e.blob_refs()})
    before = await snapshot(lab)
    for case, (build, expected) in sorted(CASES.items()):
        bad = build(members_of(exported.path), tmp_path / f"bad-{case}.jkbundle", original)
        with pytest.raises(InvalidBundle) as refused:
            await import_bundle(lab, bad)
        message = str(refused.value)
        assert expected in message, f"{case}: {message}"
        assert "\n" not in message, case
        assert await snapshot(lab) == before, case

    size = len(original)
    assert size < len(BIG_BLOB)  # a small file with big content
    for limit, expected in [(size - 1, "over the import limit"), (size + 100, "unpacks to more")]:
        lab.settings = lab.settings.model_copy(update={"export_max_bytes": limit})
        with pytest.raises(InvalidBundle, match=expected):
            await import_bundle(lab, exported.path)
        assert await snapshot(lab) == before


# --- secrets ----------------------------------------------------------------------------------


def _secret() -> str:
    return f"sk-test-{secrets.token_hex(12)}"


@pytest.mark.parametrize("where", ["payload", "escaped", "blob", "run-name"])
async def test_export_refuses_a_stored_secret_and_writes_nothing(
    lab: Lab, tmp_path: Path, where: str
) -> None:
    value = _secret() + ('"quote\\' if where == "escaped" else "")
    lab.secrets.set("openai_key", value)
    run = await seed_run(lab, extra=value if where == "blob" else "")
    if where == "run-name":
        run = await lab.runs.create(f"leaky {value}")
    if where in ("payload", "escaped"):
        await lab.events.append(run.id, "model.call", {"header": f"Bearer {value}"})
    target = tmp_path / "leak.jkbundle"
    with pytest.raises(SecretInExport) as refused:
        await export_run(lab, run.id, target)
    message = str(refused.value)
    assert value not in message and value[:12] not in message
    expected = {"payload": "event seq 28 ", "escaped": "event seq 28 ", "blob": "named by event"}
    assert expected.get(where, "run's name") in message
    assert files_in(tmp_path) == []


async def test_a_clean_export_holds_no_secret_value(lab: Lab, tmp_path: Path) -> None:
    value = _secret()
    lab.secrets.set("deepseek_key", value)
    run = await seed_run(lab)
    await lab.events.append(run.id, "model.call", {"provider": "deepseek", "key": "deepseek_key"})
    exported = await export_run(lab, run.id, tmp_path / "clean.jkbundle")
    assert value.encode() not in exported.path.read_bytes()
    for data in members_of(exported.path).values():
        assert value.encode() not in data


# --- command line -----------------------------------------------------------------------------


def cli() -> typer.Typer:
    app = typer.Typer()
    bundle_cmds.register(app)
    return app


def flat(text: str) -> str:
    return " ".join(text.split())


def test_cli_export_import_and_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUSTKERNEL_DATA_DIR", str(tmp_path / "data"))

    async def seed() -> str:
        lab = await open_lab(Settings())
        try:
            return (await seed_run(lab)).id
        finally:
            await lab.close()

    run_id = asyncio.run(seed())
    runner = CliRunner()
    bundle = tmp_path / "cli.jkbundle"
    result = runner.invoke(cli(), ["export", run_id, "--output", str(bundle)])
    assert result.exit_code == 0, result.output
    sha = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert run_id in result.output and sha in result.output and "events 27" in flat(result.output)

    again = runner.invoke(cli(), ["export", run_id, "-o", str(bundle)])
    assert again.exit_code == 2 and "already exists" in flat(again.output)
    missing = runner.invoke(cli(), ["export", "run-nope", "-o", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "no run with id" in flat(missing.output)

    checked = runner.invoke(cli(), ["import", str(bundle), "--check"])
    assert checked.exit_code == 0 and "valid bundle" in flat(checked.output)
    loaded = runner.invoke(cli(), ["import", str(bundle)])
    assert loaded.exit_code == 0, loaded.output
    new_id = re.search(r"as run (run-\S+)", loaded.output)
    assert new_id and new_id.group(1) != run_id
    assert sha in loaded.output and "events 27" in flat(loaded.output)

    junk = tmp_path / "junk.jkbundle"
    junk.write_text("not a bundle")
    refused = runner.invoke(cli(), ["import", str(junk)])
    assert refused.exit_code == 2
    assert "import refused" in flat(refused.output) and "not a zip" in flat(refused.output)
    assert "Traceback" not in refused.output
