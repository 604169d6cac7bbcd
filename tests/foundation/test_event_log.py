"""The event log on real SQLite and PostgreSQL: migrations, concurrency, fan-out."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import inspect

from justkernel.events import Event, NewEvent, ReadOnlyRun
from justkernel.lab import Lab
from justkernel.store import UnknownRun, migrate


async def test_migrations_apply_from_empty_and_are_idempotent(lab: Lab) -> None:
    def tables(sync_conn) -> set[str]:  # type: ignore[no-untyped-def]
        return set(inspect(sync_conn).get_table_names())

    async with lab.db.reader.connect() as conn:
        names = await conn.run_sync(tables)
    assert {"runs", "events", "alembic_version"} <= names
    await migrate(lab.db)  # a second run finds nothing to do and does not fail


async def test_eight_concurrent_writers_lose_nothing_and_leave_no_gap(lab: Lab) -> None:
    run = await lab.runs.create("concurrency")
    writers, per_writer = 8, 1250

    async def writer(n: int) -> None:
        for i in range(per_writer):
            await lab.events.append(run.id, "test.tick", {"writer": n, "i": i}, team=f"t{n}")

    await asyncio.gather(*(writer(n) for n in range(writers)))

    stored = [e async for e in lab.events.iter_all(run.id)]
    assert len(stored) == writers * per_writer == 10_000
    assert [e.seq for e in stored] == list(range(1, 10_001))
    seen = {(e.payload["writer"], e.payload["i"]) for e in stored}
    assert len(seen) == 10_000
    # each writer's own events keep the order it wrote them in
    for n in range(writers):
        mine = [e.payload["i"] for e in stored if e.payload["writer"] == n]
        assert mine == list(range(per_writer))
    assert (await lab.runs.get(run.id)).last_seq == 10_000


async def test_live_and_late_subscribers_see_the_identical_stream(lab: Lab) -> None:
    run = await lab.runs.create("fanout")
    total = 600
    live: list[Event] = []

    async def collect(into: list[Event], count: int) -> None:
        async for event in lab.events.subscribe(run.id):
            into.append(event)
            if len(into) == count:
                return

    live_task = asyncio.create_task(collect(live, total))
    await asyncio.sleep(0.05)

    async def producer(n: int) -> None:
        for i in range(total // 3):
            await lab.events.append(run.id, "test.tick", {"p": n, "i": i})
            if i % 50 == 0:
                await asyncio.sleep(0)

    late: list[Event] = []
    late_task: asyncio.Task[None] | None = None
    for n in range(3):
        await producer(n)
        if n == 0:  # a subscriber that joins halfway through the run
            late_task = asyncio.create_task(collect(late, total))
    await asyncio.wait_for(live_task, timeout=30)
    assert late_task is not None
    await asyncio.wait_for(late_task, timeout=30)

    assert [e.seq for e in live] == list(range(1, total + 1))
    assert [e.to_json() for e in live] == [e.to_json() for e in late]


async def test_a_subscriber_that_falls_behind_catches_up_without_gaps(lab: Lab) -> None:
    run = await lab.runs.create("slow reader")
    lab.events.bus._queue_size = 8  # tiny queue: the slow reader must overflow it
    got: list[int] = []

    async def slow_reader() -> None:
        async for event in lab.events.subscribe(run.id):
            got.append(event.seq)
            await asyncio.sleep(0.001)
            if len(got) == 300:
                return

    task = asyncio.create_task(slow_reader())
    await asyncio.sleep(0.02)
    await lab.events.append_many(run.id, [NewEvent("test.tick", {"i": i}) for i in range(300)])
    await asyncio.wait_for(task, timeout=30)
    assert got == list(range(1, 301))


async def test_append_to_unknown_or_read_only_run_is_refused(lab: Lab) -> None:
    with pytest.raises(UnknownRun):
        await lab.events.append("no-such-run", "x", {})
    replay = await lab.runs.create("replay", mode="replay", read_only=True)
    with pytest.raises(ReadOnlyRun):
        await lab.events.append(replay.id, "x", {})
    assert await lab.events.read(replay.id) == []


async def test_payload_text_is_kept_byte_for_byte(lab: Lab) -> None:
    run = await lab.runs.create("bytes")
    payload = {"中文": "测试", "float": 0.1, "nested": {"b": [1, 2], "a": None}}
    written = await lab.events.append(run.id, "note", payload, team="Qwen-001")
    (read_back,) = await lab.events.read(run.id)
    assert read_back.to_json() == written.to_json()
    assert read_back.payload == payload


async def test_dedup_key_writes_an_event_once(lab: Lab) -> None:
    run = await lab.runs.create("dedup")
    first = await lab.events.append(run.id, "tool.result", {"n": 1}, dedup_key="t1:call_1")
    again = await lab.events.append(run.id, "tool.result", {"n": 2}, dedup_key="t1:call_1")
    assert again.to_json() == first.to_json()
    batch = await lab.events.append_many(
        run.id,
        [
            NewEvent("a", {}, dedup_key="k2"),
            NewEvent("b", {}),
            NewEvent("a", {}, dedup_key="k2"),
            NewEvent("c", {}, dedup_key="t1:call_1"),
        ],
    )
    assert [e.seq for e in batch] == [2, 3, 2, 1]
    stored = await lab.events.read(run.id)
    assert [e.seq for e in stored] == [1, 2, 3]
    assert (await lab.runs.get(run.id)).last_seq == 3


async def test_a_key_already_written_in_a_group_of_concurrent_appends_fails_none(lab: Lab) -> None:
    """Appends are written optimistically (no look-up of their keys first): a group holding one
    key the log already has is written again with the look-up, and each caller still gets its
    own event, with no gap and nothing written twice."""
    run = await lab.runs.create("dedup in a group")
    first = await lab.events.append(run.id, "tool.call", {"n": 0}, dedup_key="t1:call_9")
    results = await asyncio.gather(
        *(
            lab.events.append(run.id, "tool.call", {"n": i}, dedup_key=f"t1:new_{i}")
            for i in range(1, 6)
        ),
        lab.events.append(run.id, "tool.call", {"n": 99}, dedup_key="t1:call_9"),
        lab.events.append(run.id, "tool.result", {"n": 7}),
    )
    assert results[5].to_json() == first.to_json()
    assert sorted(e.seq for e in results if e is not results[5]) == [2, 3, 4, 5, 6, 7]
    stored = await lab.events.read(run.id)
    assert [e.seq for e in stored] == list(range(1, 8))
    assert [e.payload["n"] for e in stored if e.kind == "tool.call"] == [0, 1, 2, 3, 4, 5]
    assert (await lab.runs.get(run.id)).last_seq == 7
