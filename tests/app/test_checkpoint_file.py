"""The agents' checkpoint file is kept as the lab's database is: WAL, synchronous=NORMAL (a
commit survives kill -9 of the lab; the crash tests kill it mid-step), not an fsync a commit."""

from __future__ import annotations

import sqlite3

from justkernel.app import LabRuntime

NORMAL = 1  # PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL


async def test_the_checkpointer_writes_a_wal_with_synchronous_normal(runtime: LabRuntime) -> None:
    conn = runtime.checkpointer.conn  # type: ignore[attr-defined]
    (mode,) = await (await conn.execute("PRAGMA journal_mode")).fetchone()
    (sync,) = await (await conn.execute("PRAGMA synchronous")).fetchone()
    assert (mode, sync) == ("wal", NORMAL)
    # what another process opening the file sees: WAL is the file's own setting
    path = runtime.lab.settings.resolved_data_dir / "checkpoints.db"
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
