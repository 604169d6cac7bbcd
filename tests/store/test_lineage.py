"""Candidate lineage on a real SQLite file and a real PostgreSQL database: the parent the store
decides when a candidate is frozen (own or adopted, closest source, latest on a tie), what it
ignores (another team's id never fetched, an unknown id), the event that carries it, and the
check an imported parent list goes through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from justkernel.lab import Lab
from justkernel.scheduler.handoff import fetched_candidates
from justkernel.store.database import MIGRATIONS_DIR
from justkernel.store.lineage import ParentOption, checked_parents, closest_parent, line_distance
from tests.support.candidates import freeze_text

BASE = "".join(f"line {i}\n" for i in range(30))


def _src(text: str) -> dict[str, bytes]:
    return {"op_kernel/k.cpp": text.encode()}


async def _freeze(lab: Lab, run_id: str, team: str, text: str, fetched: tuple[str, ...] = ()):
    return await freeze_text(lab, run_id, team, text, path="op_kernel/k.cpp", fetched=fetched)


def test_line_distance_counts_removed_and_added_lines_over_every_file() -> None:
    a = {"a.cpp": b"x\ny\nz\n", "gone.h": b"1\n2\n"}
    b = {"a.cpp": b"x\nY\nz\n", "new.h": b"n\n"}
    # y -> Y: one out, one in; gone.h: two out; new.h: one in
    assert line_distance(a, b) == 5
    assert line_distance(a, a) == 0


def test_the_closest_source_wins_and_a_tie_goes_to_the_latest() -> None:
    new = _src(BASE + "tail\n")
    far = ParentOption("cand-far", "own", "2026-01-03", _src("other\n"))
    near_old = ParentOption("cand-old", "own", "2026-01-01", _src(BASE))
    near_new = ParentOption("cand-new", "adopted", "2026-01-02", _src(BASE))
    assert closest_parent(new, [far, near_old, near_new]) is near_new
    assert closest_parent(new, [near_new, near_old]) is near_new
    assert closest_parent(new, []) is None


def test_checked_parents_drops_unknown_later_self_and_unknown_kinds() -> None:
    nodes = [
        ("c1", None, None),
        ("c2", "c1", "own"),
        ("c3", "c4", "own"),  # names a later one: would allow a cycle
        ("c4", "c3", "adopted"),
        ("c5", "c5", "own"),  # itself
        ("c6", "cand-other-run", "own"),
        ("c7", "c2", "trust-me"),
    ]
    assert checked_parents(nodes) == {
        "c1": None,
        "c2": ("c1", "own"),
        "c3": None,
        "c4": ("c3", "adopted"),
        "c5": None,
        "c6": None,
        "c7": None,
    }


async def test_freeze_records_own_and_adopted_parents(lab: Lab) -> None:
    run = await lab.runs.create("lineage")
    first = await _freeze(lab, run.id, "team-001", BASE)
    assert (first.parent_id, first.parent_kind) == (None, None)
    second = await _freeze(lab, run.id, "team-001", BASE + "tuned\n")
    assert (second.parent_id, second.parent_kind) == (first.id, "own")

    other = await _freeze(lab, run.id, "team-002", "team two's own kernel\n" * 10)
    # team-001 fetched team-002's candidate and adopted it with one line changed
    adopted = await _freeze(
        lab, run.id, "team-001", "team two's own kernel\n" * 10 + "mine\n", (other.id,)
    )
    assert (adopted.parent_id, adopted.parent_kind) == (other.id, "adopted")
    stored = await lab.candidates.get(run.id, adopted.id)
    assert (stored.parent_id, stored.parent_kind) == (other.id, "adopted")

    # the event carries it, so a replay (events only) shows the same tree
    frozen = [e.typed() for e in await lab.events.read(run.id, kinds=["candidate.frozen"])]
    by_id = {p.candidate_id: p for p in frozen}
    assert (by_id[adopted.id].parent_id, by_id[adopted.id].parent_kind) == (other.id, "adopted")
    assert by_id[first.id].parent_id is None


async def test_a_candidate_never_fetched_or_unknown_is_not_a_parent(lab: Lab) -> None:
    run = await lab.runs.create("lineage-honest")
    mine = await _freeze(lab, run.id, "team-001", BASE)
    theirs = await _freeze(lab, run.id, "team-002", BASE + "x\n")
    # the same source as theirs plus a line, but team-001 never fetched it: its own is the
    # only other choice; an id of no candidate, and its own id listed as fetched, change nothing
    child = await _freeze(
        lab, run.id, "team-001", BASE + "x\ny\n", ("cand-000000000000", mine.id, "../etc")
    )
    assert (child.parent_id, child.parent_kind) == (mine.id, "own")
    other_run = await lab.runs.create("elsewhere")
    # another run's candidate id is not this run's candidate
    alone = await _freeze(lab, other_run.id, "team-001", BASE + "z\n", (theirs.id,))
    assert (alone.parent_id, alone.parent_kind) == (None, None)


def test_fetched_candidates_lists_folder_names_only(tmp_path: Path) -> None:
    assert fetched_candidates(tmp_path) == []
    folder = tmp_path / "scratch" / "candidates"
    (folder / "cand-aaaaaaaaaaaa").mkdir(parents=True)
    (folder / "note.txt").write_text("not a candidate")
    (folder / "cand-link").symlink_to(tmp_path)
    assert fetched_candidates(tmp_path) == ["cand-aaaaaaaaaaaa"]


def _alembic(connection: Any, target: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    command.upgrade(config, target)


def test_an_existing_database_gains_the_parent_columns_and_keeps_its_candidates(
    tmp_path: Path,
) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        _alembic(conn, "0007")
        conn.execute(
            sa.text(
                "INSERT INTO candidates (run_id, id, team_id, source_sha256, archive_blob,"
                " receipt_key, local_passed, status, created_at, updated_at) VALUES"
                " ('r', 'cand-1', 't', 's', 'b', 'k', 1, 'frozen', 'now', 'now')"
            )
        )
    with engine.begin() as conn:
        _alembic(conn, "head")
        row = conn.execute(sa.text("SELECT id, parent_id, parent_kind FROM candidates")).one()
    assert tuple(row) == ("cand-1", None, None)
    engine.dispose()


def test_a_control_team_adopts_nothing_from_a_folder_it_made(tmp_path: Path) -> None:
    (tmp_path / "scratch" / "candidates" / "cand-aaaaaaaaaaaa").mkdir(parents=True)
    assert fetched_candidates(tmp_path, "none") == []
    assert fetched_candidates(tmp_path, "broadcast-best") == ["cand-aaaaaaaaaaaa"]
