"""The one row mapping (store/records.py): a record read back from a real row has the types
its fields declare (a path, a bool, a JSON object, a status enum) on SQLite and PostgreSQL, and
shows itself under its outside names."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from justkernel.core.statuses import CandidateStatus
from justkernel.lab import Lab
from justkernel.store.records import Record
from justkernel.store.teams import TeamRegistry


@dataclass(frozen=True)
class _Shown(Record):
    PUBLIC: ClassVar = {"id": "thing_id", "secret": None}
    SPREAD: ClassVar = "extra"

    id: str
    secret: str
    status: CandidateStatus
    folder: Path | None
    flag: bool
    extra: dict[str, Any] = field(default_factory=dict)
    note: str = "default"


def test_a_mapping_becomes_a_record_with_the_declared_types_and_defaults() -> None:
    shown = _Shown.from_row(
        {"id": "x", "secret": "s", "status": "frozen", "folder": "/tmp/a", "flag": 1, "extra": None}
    )
    assert shown.status is CandidateStatus.FROZEN
    assert shown.folder == Path("/tmp/a") and shown.flag is True
    assert shown.extra == {} and shown.note == "default"
    assert _Shown.from_row({**shown.__dict__, "folder": None}).folder is None


def test_to_dict_renames_hides_and_spreads_last() -> None:
    shown = _Shown("x", "s", CandidateStatus.REVIEWED, None, False, {"status": "spread wins"})
    assert shown.to_dict() == {
        "thing_id": "x",
        "status": "spread wins",
        "folder": None,
        "flag": False,
        "note": "default",
    }
    assert next(iter(shown.to_dict())) == "thing_id"


async def test_a_team_read_back_from_the_database(lab: Lab, tmp_path: Path) -> None:
    run = await lab.runs.create("records")
    registry = TeamRegistry(lab.db)
    made = await registry.register(
        run.id,
        model_preset="offline",
        model_label="Offline",
        workspaces_dir=tmp_path,
        config={"sharing": "public"},
    )
    read = await registry.get(run.id, made.id)
    assert read == made
    assert isinstance(read.workspace, Path) and read.config == {"sharing": "public"}
    assert "workspace" not in read.to_dict() and read.to_dict()["display_name"] == "Offline-001"
