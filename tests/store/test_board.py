"""BoardStore's rows on SQLite and PostgreSQL: a message once per (sender, sender's id), a
delivery per recipient going pending → delivered (the same call gets the same messages again)
→ acked, or back to pending when released; the agent sees the payload beside the envelope."""

from __future__ import annotations

from justkernel.lab import Lab
from justkernel.store.board import BoardMessage, BoardStore


def _message(number: int) -> BoardMessage:
    return BoardMessage(
        id=f"msg-{number}",
        sender="team-001",
        sender_message_id=f"m{number}",
        recipient="all",
        type="experience",
        payload={"summary": f"note {number}"},
        created_at=f"2026-12-01T00:00:0{number}",
    )


async def test_a_delivery_goes_pending_delivered_acked_or_back_to_pending(lab: Lab) -> None:
    run = await lab.runs.create("board rows")
    rows = BoardStore(lab.db)
    assert await rows.add(run.id, _message(1), ["team-002", "team-003"])
    duplicate = BoardMessage(**{**_message(1).__dict__, "id": "msg-other"})
    assert not await rows.add(run.id, duplicate, ["team-002"])
    assert await rows.by_sender_id(run.id, "team-001", "m1") == _message(1)
    assert await rows.add(run.id, _message(2), ["team-002"])

    first = await rows.deliver(run.id, "team-002", "call-a")
    assert [m.id for m in first] == ["msg-1", "msg-2"] and await rows.pending(
        run.id, "team-002"
    ) == 0
    assert await rows.deliver(run.id, "team-002", "call-a") == first  # a re-run call
    assert await rows.deliver(run.id, "team-002", "call-b") == []
    assert first[0].to_dict() == {
        "message_id": "msg-1",
        "from": "team-001",
        "to": "all",
        "type": "experience",
        "created_at": "2026-12-01T00:00:01",
        "summary": "note 1",
    }

    (one, two) = sorted(
        await rows.delivered(run.id, "team-002", ["call-a"]), key=lambda d: d.message_id
    )
    assert (one.message_id, one.delivered_by, one.type) == ("msg-1", "call-a", "experience")
    await rows.mark_acked(run.id, "team-002", ["msg-1"])
    await rows.release(run.id, "team-002", two)
    assert await rows.delivery_states(run.id, "msg-1") == {
        "team-002": "acked",
        "team-003": "pending",
    }
    assert await rows.delivery_states(run.id, "msg-2") == {"team-002": "pending"}
    assert await rows.delivered(run.id, "team-002") == []
    assert [m.id for m in await rows.messages(run.id, "experience")] == ["msg-1", "msg-2"]
