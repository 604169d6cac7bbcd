"""The lab board on real SQLite and PostgreSQL: dedup, policies, delivery and exactly-once ack."""

from __future__ import annotations

from pathlib import Path

import pytest

from justkernel.a2a.board import BoardError, LabBoard
from justkernel.lab import Lab
from justkernel.store.teams import TeamRegistry


async def _board_with_teams(lab: Lab, tmp_path: Path, policies: list[str]) -> tuple[str, LabBoard]:
    run = await lab.runs.create("board")
    registry = TeamRegistry(lab.db)
    for policy in policies:
        await registry.register(
            run.id,
            model_preset="offline",
            model_label="Offline",
            workspaces_dir=tmp_path,
            config={"sharing": policy},
        )
    return run.id, LabBoard(lab.db, lab.events, registry)


async def test_a_duplicated_send_is_one_message(lab: Lab, tmp_path: Path) -> None:
    run_id, board = await _board_with_teams(lab, tmp_path, ["broadcast-best"] * 3)
    first, new = await board.post(
        run_id,
        sender="team-001",
        sender_message_id="m1",
        recipient="all",
        type="candidate",
        payload={"summary": "best"},
    )
    again, new_again = await board.post(
        run_id,
        sender="team-001",
        sender_message_id="m1",
        recipient="all",
        type="candidate",
        payload={"summary": "best"},
    )
    assert new and not new_again and again.id == first.id
    assert await board.delivery_states(run_id, first.id) == {
        "team-002": "pending",
        "team-003": "pending",
    }


async def test_policies_decide_who_hears_what(lab: Lab, tmp_path: Path) -> None:
    run_id, board = await _board_with_teams(
        lab, tmp_path, ["broadcast-best", "broadcast-best", "ring", "ring", "ring", "none", "pull"]
    )
    msg, _ = await board.post(
        run_id,
        sender="team-001",
        sender_message_id="a",
        recipient="all",
        type="candidate",
        payload={},
    )
    assert set(await board.delivery_states(run_id, msg.id)) == {"team-002"}
    ring, _ = await board.post(
        run_id,
        sender="team-005",
        sender_message_id="b",
        recipient="all",
        type="candidate",
        payload={},
    )
    assert set(await board.delivery_states(run_id, ring.id)) == {"team-003"}  # wraps around
    pulled, _ = await board.post(
        run_id,
        sender="team-007",
        sender_message_id="c",
        recipient="all",
        type="experience",
        payload={},
    )
    assert await board.delivery_states(run_id, pulled.id) == {}
    with pytest.raises(BoardError, match="control team"):
        await board.post(
            run_id,
            sender="team-001",
            sender_message_id="d",
            recipient="team-006",
            type="message",
            payload={},
        )
    # official feedback: the control team gets its own, but not others' broadcasts
    own, _ = await board.post(
        run_id,
        sender="judger",
        sender_message_id="e",
        recipient="team-006",
        type="feedback",
        payload={},
    )
    assert set(await board.delivery_states(run_id, own.id)) == {"team-006"}
    everyone, _ = await board.post(
        run_id,
        sender="judger",
        sender_message_id="f",
        recipient="all",
        type="feedback",
        payload={},
    )
    assert "team-006" not in await board.delivery_states(run_id, everyone.id)
    assert len(await board.delivery_states(run_id, everyone.id)) == 6


async def test_delivery_survives_a_rerun_and_acks_exactly_once(lab: Lab, tmp_path: Path) -> None:
    run_id, board = await _board_with_teams(lab, tmp_path, ["broadcast-best"] * 2)
    msg, _ = await board.post(
        run_id,
        sender="judger",
        sender_message_id="result-1",
        recipient="all",
        type="feedback",
        payload={"summary": "official pass"},
    )
    first = await board.deliver(run_id, "team-001", "call-1")
    assert [m.id for m in first] == [msg.id]
    # the lab died before the tool result was checkpointed: the same call runs again
    rerun = await board.deliver(run_id, "team-001", "call-1")
    assert [m.id for m in rerun] == [msg.id]
    # another call does not see a message that is in flight
    assert await board.deliver(run_id, "team-001", "call-2") == []
    assert await board.ack(run_id, "team-001", ["call-1"]) == 1
    assert await board.ack(run_id, "team-001", ["call-1"]) == 0
    assert (await board.delivery_states(run_id, msg.id))["team-001"] == "acked"
    acks = [e async for e in lab.events.iter_all(run_id) if e.kind == "a2a.acked"]
    assert len(acks) == 1


async def test_a_read_of_several_messages_logs_their_events_together_and_once(
    lab: Lab, tmp_path: Path
) -> None:
    """One read's delivered events, one ack's acked events and one release's events are each
    appended in one go (consecutive sequence numbers), and a re-run writes none again."""
    run_id, board = await _board_with_teams(lab, tmp_path, ["broadcast-best"] * 2)
    posted = []
    for n in range(3):
        msg, _ = await board.post(
            run_id,
            sender="team-002",
            sender_message_id=f"note-{n}",
            recipient="team-001",
            type="message",
            payload={"text": f"note {n}"},
        )
        posted.append(msg.id)

    async def seqs(kind: str) -> list[int]:
        return [e.seq async for e in lab.events.iter_all(run_id) if e.kind == kind]

    assert [m.id for m in await board.deliver(run_id, "team-001", "call-1")] == posted
    assert [m.id for m in await board.deliver(run_id, "team-001", "call-1")] == posted
    delivered = await seqs("a2a.delivered")
    assert len(delivered) == 3 and delivered == list(range(delivered[0], delivered[0] + 3))
    # the call's result never reached the agent: all three go back to pending, logged once
    assert await board.release_unseen(run_id, "team-001", seen_calls=set()) == 3
    assert len(await seqs("a2a.released")) == 3
    assert await board.pending(run_id, "team-001") == 3
    assert await board.pending_by_team(run_id) == {"team-001": 3}  # the pass's one read
    assert len(await board.deliver(run_id, "team-001", "call-2")) == 3
    assert await board.pending_by_team(run_id) == {}
    assert await board.ack(run_id, "team-001", ["call-2"]) == 3
    acked = await seqs("a2a.acked")
    assert acked == list(range(acked[0], acked[0] + 3))
    assert await board.ack(run_id, "team-001", ["call-2"]) == 0
    assert len(await seqs("a2a.acked")) == 3


async def test_rate_limit_and_bad_posts(lab: Lab, tmp_path: Path) -> None:
    run_id, board = await _board_with_teams(lab, tmp_path, ["broadcast-best"] * 2)
    board._rate = 3
    for i in range(3):
        await board.post(
            run_id,
            sender="team-001",
            sender_message_id=f"r{i}",
            recipient="team-002",
            type="message",
            payload={},
        )
    with pytest.raises(BoardError, match="rate limit"):
        await board.post(
            run_id,
            sender="team-001",
            sender_message_id="r9",
            recipient="team-002",
            type="message",
            payload={},
        )
    with pytest.raises(BoardError, match="unknown team"):
        await board.post(
            run_id,
            sender="team-002",
            sender_message_id="x",
            recipient="team-042",
            type="message",
            payload={},
        )
    with pytest.raises(BoardError, match="unknown message type"):
        await board.post(
            run_id,
            sender="team-002",
            sender_message_id="y",
            recipient="all",
            type="spam",
            payload={},
        )


async def test_only_the_lab_writes_a_coded_summary(lab: Lab, tmp_path: Path) -> None:
    """The page translates a summary code; a team's words are shown as written, so a team that
    sets the keys gets none in the event, while the Judger's feedback keeps its code."""
    run_id, board = await _board_with_teams(lab, tmp_path, ["broadcast-best"] * 2)
    coded = {"summary_code": "feedback_own", "summary_params": {"candidate": "c", "status": "x"}}
    await board.post(
        run_id,
        sender="team-001",
        sender_message_id="forged",
        recipient="all",
        type="message",
        payload={"summary": "mine", **coded},
    )
    await board.post(
        run_id,
        sender="judger",
        sender_message_id="result:s:team-001",
        recipient="team-001",
        type="feedback",
        payload={"summary": "your candidate c: x", **coded},
    )
    events = await lab.events.read(run_id, kinds=["a2a.message"])
    by_summary = {e.payload["summary"]: e.payload for e in events}
    assert by_summary["mine"].get("summary_code") is None
    assert by_summary["your candidate c: x"]["summary_code"] == "feedback_own"
    assert by_summary["your candidate c: x"]["summary_params"] == {"candidate": "c", "status": "x"}
