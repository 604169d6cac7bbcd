"""The one row mapping (core/records/base.py): a record read back from a real row has the types
its fields declare (a path, a bool, a JSON object, a status enum) on SQLite and PostgreSQL, and
shows itself under its outside names."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from sqlalchemy import select

from justkernel.core.records.base import Record
from justkernel.core.records.teams import Team
from justkernel.core.statuses import CandidateStatus
from justkernel.lab import Lab
from justkernel.store import schema
from justkernel.store.experiments import ExperimentBook
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


async def test_rows_of_any_column_order_map_by_name_once_per_result(
    lab: Lab, tmp_path: Path
) -> None:
    """`from_rows` works out the columns' positions once per result: a read of the columns
    in another order, or of some of them, gives the same records as `from_row` row by row."""
    run = await lab.runs.create("records by position")
    registry = TeamRegistry(lab.db)
    for n in range(3):
        await registry.register(
            run.id,
            model_preset="offline",
            model_label="Offline",
            workspaces_dir=tmp_path,
            config={"n": n},
        )
    teams = await registry.list(run.id)
    columns = list(schema.teams.c)
    shuffled = await lab.db.fetch_all(
        select(*reversed(columns)).where(schema.teams.c.run_id == run.id).order_by("number")
    )
    assert Team.from_rows(shuffled) == teams == [Team.from_row(r) for r in shuffled]
    assert [t.config for t in teams] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert all(isinstance(t.workspace, Path) for t in teams)
    some = await lab.db.fetch_all(
        select(schema.teams.c.id, schema.teams.c.status).where(schema.teams.c.run_id == run.id)
    )
    rows = [{**t.__dict__, "config": None} for t in teams]  # mappings: the same rules by name
    assert [t.id for t in Team.from_rows(rows)] == [r.id for r in some]
    assert Team.from_rows([]) == []


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


async def test_plans_are_found_by_their_call_among_many(lab: Lab) -> None:
    """The lookups read one row by the plan's call id (not the notebook): the right one among
    several plans and teams, and the record a new plan returns is the row as read back."""
    run = await lab.runs.create("experiments by call")
    book = ExperimentBook(lab.db)
    made = {}
    for team in ("team-001", "team-002"):
        for n in range(3):
            made[team, n], new = await book.record_plan(run.id, team, {"n": n}, f"call-{n}")
            assert new
    assert made["team-001", 2] == await book.get(run.id, "team-001", 3)
    again, new = await book.record_plan(run.id, "team-002", {"n": 9}, "call-1")
    assert (again, new) == (made["team-002", 1], False)
    assert [e.number for e in await book.list(run.id, "team-002")] == [1, 2, 3]
    assert await book.open_plan(run.id, "team-002") == made["team-002", 2]
    await book.close(
        made["team-002", 1],
        status="failed",
        commit="c0ffee",
        tree_sha256="b" * 64,
        receipt_key="job-2",
        cycles_sum=None,
        closed_by="sim-1",
    )
    closed = await book.closed_by_call(run.id, "team-002", "sim-1")
    assert closed is not None and closed.number == 2 and closed.status == "failed"
    assert await book.closed_by_call(run.id, "team-001", "sim-1") is None
    assert await book.closed_by_call(run.id, "team-002", "call-1") is None


async def test_an_experiment_plan_is_recorded_once_per_call_and_closed(lab: Lab) -> None:
    run = await lab.runs.create("experiments")
    book = ExperimentBook(lab.db)
    plan, new = await book.record_plan(run.id, "team-001", {"hypothesis": "tile"}, "call-1")
    again, new_again = await book.record_plan(run.id, "team-001", {"hypothesis": "x"}, "call-1")
    assert (new, new_again, again) == (True, False, plan)
    assert await book.open_plan(run.id, "team-001") == plan
    await book.close(
        plan,
        status="measured",
        commit="c0ffee",
        tree_sha256="a" * 64,
        receipt_key="job-1",
        cycles_sum=900,
        closed_by="call-2",
    )
    closed = await book.closed_by_call(run.id, "team-001", "call-2")
    assert closed is not None and closed.cycles_sum == 900 and closed.status == "measured"
    assert await book.open_plan(run.id, "team-001") is None
    assert set(closed.to_dict()) == {
        "number",
        "plan",
        "status",
        "commit",
        "tree_sha256",
        "receipt_key",
        "cycles_sum",
        "created_at",
    }
