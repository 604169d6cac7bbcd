"""Attack: an imported session bundle is hostile.

Anyone can write a bundle, so a self-consistent one (members and manifest hashes agree) can
still lie: `simulated: false` on demo data made it pass for a real run, a bundle carrying the
value of a stored secret was imported (and the run could then not be exported), and 600k tiny
events in a 1.8 MB bundle took hundreds of MB while the whole log was held in memory. Imports
are now labelled imported whatever the manifest says, refused when they carry a stored secret,
streamed into the store, and capped in events.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from justkernel.events import Event
from justkernel.events.run_archive import (
    EVENTS_NAME,
    MANIFEST_NAME,
    InvalidBundle,
    encode_event_line,
)
from justkernel.events.run_export import export_run
from justkernel.events.run_import import import_bundle
from justkernel.lab import Lab, open_lab
from justkernel.reports.report import build_report
from justkernel.settings.config import Settings
from justkernel.store.runs import Run
from tests.foundation.test_bundle import members_of, seed_run, snapshot

MIB = 1024  # the child reports KiB


def forged(
    bundle: Path, out: Path, *, run: dict | None = None, events: bytes | None = None
) -> Path:
    """`bundle` rewritten as an attacker would: other run fields or other events, with every
    hash and size in the manifest recomputed, so the file is self-consistent."""
    members = members_of(bundle)
    manifest = json.loads(members[MANIFEST_NAME])
    manifest["run"].update(run or {})
    if events is not None:
        members[EVENTS_NAME] = events
        manifest["members"][EVENTS_NAME] = {
            "sha256": hashlib.sha256(events).hexdigest(),
            "size": len(events),
        }
    members[MANIFEST_NAME] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return out


async def test_a_forged_not_simulated_claim_stays_an_imported_claim(
    lab: Lab, tmp_path: Path
) -> None:
    demo = await seed_run(lab, simulated=True)
    exported = await export_run(lab, demo.id, tmp_path / "demo.jkbundle")
    lie = {"simulated": False, "meta": {"simulated": False, "imported": False, "provenance": "x"}}
    bundle = forged(exported.path, tmp_path / "real.jkbundle", run=lie)

    run: Run = (await import_bundle(lab, bundle)).run

    assert run.mode == "replay" and run.read_only
    assert run.meta["imported"] is True  # the lab's own key, set after the bundle's meta
    assert run.meta["provenance"] == "imported, claims not simulated"
    assert run.to_dict()["provenance"] == "imported, claims not simulated"
    report = await build_report(lab, run.id, "md")
    assert "imported, claims not simulated" in report
    again = await export_run(lab, run.id, tmp_path / "again.jkbundle")  # the label travels
    meta = json.loads(members_of(again.path)[MANIFEST_NAME])["run"]["meta"]
    assert meta["imported"] is True and meta["provenance"] == "imported, claims not simulated"


@pytest.mark.parametrize("where", ["event", "blob"])
async def test_a_bundle_carrying_a_stored_secret_is_refused(
    lab: Lab, tmp_path: Path, where: str
) -> None:
    value = "sk-" + hashlib.sha256(tmp_path.name.encode()).hexdigest()[:40]
    run = await seed_run(lab, extra=value if where == "blob" else "")
    if where == "event":
        await lab.events.append(run.id, "model.call", {"header": f"Bearer {value}"})
    exported = await export_run(lab, run.id, tmp_path / "leak.jkbundle")  # not yet a secret
    lab.secrets.set("openai_key", value)  # the importing lab holds it
    before = await snapshot(lab)

    with pytest.raises(InvalidBundle) as refused:
        await import_bundle(lab, exported.path)

    message = str(refused.value)
    assert "stored secret 'openai_key'" in message and value not in message
    assert (EVENTS_NAME if where == "event" else "blobs/") in message
    assert await snapshot(lab) == before  # nothing imported, no blob stored


def _event_lines(origin: str, count: int) -> bytes:
    line = encode_event_line(
        Event(origin, 1, "x", None, "2025-01-01T00:00:00+00:00", 1, "{}"), origin
    )
    first = line.replace(b'"seq":1,', b'"seq":%d,')
    assert first != line
    return b"".join(first % seq for seq in range(1, count + 1))


def _many_events_bundle(lab_bundle: Path, out: Path, origin: str, count: int, claimed: int) -> Path:
    return forged(lab_bundle, out, run={"event_count": claimed}, events=_event_lines(origin, count))


CHILD = """
import asyncio, json, sys
from pathlib import Path
from justkernel.events.run_archive import BundleError
from justkernel.events.run_import import import_bundle
from justkernel.lab import open_lab
from justkernel.settings.config import Settings

def peak_kib() -> int:
    # VmHWM, not ru_maxrss: ru_maxrss survives exec, so it starts at the forking parent's peak
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0])

async def main() -> None:
    bundle, data, config = sys.argv[1:4]
    settings = Settings(data_dir=Path(data), config_dir=Path(config))
    lab = await open_lab(settings)
    before = peak_kib()
    try:
        outcome = "imported %d" % (await import_bundle(lab, Path(bundle))).event_count
    except BundleError as exc:
        outcome = str(exc)
    growth = peak_kib() - before
    await lab.close()
    print(json.dumps({"outcome": outcome, "growth_kib": growth}))

asyncio.run(main())
"""


def import_in_child(bundle: Path, tmp_path: Path, cap: int) -> tuple[str, int]:
    """Import in a fresh process; its outcome and how far its peak RSS grew (KiB)."""
    data, config = tmp_path / "child-data", tmp_path / "child-config"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(bundle), str(data), str(config)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "JUSTKERNEL_IMPORT_MAX_EVENTS": str(cap)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer["outcome"], answer["growth_kib"]


@pytest.fixture
async def small_bundle(settings: Settings, tmp_path: Path) -> tuple[Path, str]:
    """A one-event bundle to forge floods from, exported from a SQLite lab. (It took the
    SQLite-and-PostgreSQL `lab` fixture, but the floods are imported in a child on a SQLite
    lab of its own whichever lab exported the seed: the PostgreSQL ids ran the same imports,
    ~100 s of the suite, a second time.)"""
    lab = await open_lab(settings)
    try:
        run = await lab.runs.create("tiny", meta={})
        await lab.events.append(run.id, "x", {})
        exported = await export_run(lab, run.id, tmp_path / "tiny.jkbundle")
    finally:
        await lab.close()
    return exported.path, json.loads(members_of(exported.path)[MANIFEST_NAME])["run"][
        "source_run_id"
    ]


@pytest.mark.parametrize("claimed", [600_000, 10], ids=["honest-manifest", "lying-manifest"])
async def test_600k_events_in_a_small_bundle_are_refused_with_bounded_memory(
    small_bundle: tuple[Path, str], tmp_path: Path, claimed: int
) -> None:
    source, origin = small_bundle
    bundle = _many_events_bundle(source, tmp_path / "flood.jkbundle", origin, 600_000, claimed)
    assert bundle.stat().st_size < 4 * 1024 * 1024  # a few MB on disk

    outcome, growth = import_in_child(bundle, tmp_path, cap=200_000)

    print(f"600k-event bundle ({claimed} claimed): peak RSS grew by {growth // MIB} MiB")
    assert "import limit of 200,000" in outcome and "JUSTKERNEL_IMPORT_MAX_EVENTS" in outcome
    assert growth < 200 * MIB, f"peak RSS grew by {growth // MIB} MiB"


async def test_events_stream_into_the_store_in_batches(
    small_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    source, origin = small_bundle
    bundle = _many_events_bundle(source, tmp_path / "many.jkbundle", origin, 250_000, 250_000)

    outcome, growth = import_in_child(bundle, tmp_path, cap=300_000)

    print(f"250k-event import: peak RSS grew by {growth // MIB} MiB")
    assert outcome == "imported 250000"
    assert growth < 40 * MIB, f"peak RSS grew by {growth // MIB} MiB for 250k events"
