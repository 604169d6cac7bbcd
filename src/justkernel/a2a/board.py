"""The lab board: messages between teams with persistent, acknowledged, deduplicated delivery.

The database is the source of truth. A message is stored once per (sender, sender's message id)
— a duplicated send returns the stored message — and gets one delivery row per recipient.
A delivery goes pending → delivered (by one tool call, which may re-run after a crash and then
gets the same messages again) → acked. The ack happens only once the agent's history holds the
tool result (the observer acks before the next model call), so a lab killed between delivery
and acknowledgement re-delivers, and every message is acknowledged exactly once.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.a2a.policies import (
    DEFAULT_POLICY,
    SharingPolicy,
    can_receive_from_others,
    push_recipients,
)
from justkernel.core.events.collab import A2AAcked, A2ADelivered, A2AMessage, A2AReleased
from justkernel.events import EventLog
from justkernel.faults import crash_point
from justkernel.store.database import Database
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import board_messages, deliveries
from justkernel.store.teams import TeamRegistry

MESSAGE_TYPES = ("message", "candidate", "experience", "feedback")
RATE_WINDOW_SECONDS = 60.0


class BoardError(ValueError):
    """A post the board refuses; the message is safe to show the agent."""


@dataclass(frozen=True)
class BoardMessage:
    id: str
    sender: str
    sender_message_id: str
    recipient: str
    type: str
    payload: dict[str, Any]
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "message_id": self.id,
            "from": self.sender,
            "to": self.recipient,
            "type": self.type,
            "created_at": self.created_at,
            **self.payload,
        }


def _message(row: Any) -> BoardMessage:
    return BoardMessage(
        id=row.id,
        sender=row.sender,
        sender_message_id=row.sender_message_id,
        recipient=row.recipient,
        type=row.type,
        payload=dict(row.payload),
        created_at=row.created_at,
    )


class LabBoard:
    def __init__(
        self,
        db: Database,
        events: EventLog,
        registry: TeamRegistry,
        *,
        rate_limit_per_minute: int = 30,
    ) -> None:
        self._db = db
        self._events = events
        self._registry = registry
        self._rate = rate_limit_per_minute
        self._recent: dict[tuple[str, str], deque[float]] = {}

    async def policies(self, run_id: str) -> tuple[dict[str, SharingPolicy], list[str]]:
        teams = await self._registry.list(run_id, include_exited=False)
        policies = {t.id: t.config.get("sharing", DEFAULT_POLICY) for t in teams}
        return policies, [t.id for t in teams]

    def _check_rate(self, run_id: str, sender: str) -> None:
        if sender in ("judger", "lab"):
            return
        window = self._recent.setdefault((run_id, sender), deque())
        now = time.monotonic()
        while window and now - window[0] > RATE_WINDOW_SECONDS:
            window.popleft()
        if len(window) >= self._rate:
            raise BoardError(f"rate limit: at most {self._rate} posts a minute per team")
        window.append(now)

    async def _recipients(self, run_id: str, sender: str, recipient: str, kind: str) -> list[str]:
        policies, order = await self.policies(run_id)
        if recipient == "all":
            if sender in ("judger", "lab"):
                if kind == "feedback":  # official results reach every team but control teams
                    return [t for t in order if can_receive_from_others(policies[t])]
                return list(order)
            return push_recipients(sender, policies, order)
        if recipient not in policies:
            raise BoardError(f"unknown team {recipient!r}")
        own_feedback = sender in ("judger", "lab") and kind == "feedback"
        if not own_feedback and not can_receive_from_others(policies[recipient]):
            raise BoardError(f"team {recipient} is a control team and receives nothing")
        if sender in policies and not can_receive_from_others(policies[sender]):
            raise BoardError("a control team does not share")
        return [recipient]

    async def post(
        self,
        run_id: str,
        *,
        sender: str,
        sender_message_id: str,
        recipient: str,
        type: str,
        payload: dict[str, Any],
    ) -> tuple[BoardMessage, bool]:
        """Store a message and its deliveries; a resend with the same id changes nothing."""
        if type not in MESSAGE_TYPES:
            raise BoardError(f"unknown message type {type!r}")
        existing = await self._by_sender_id(run_id, sender, sender_message_id)
        if existing is not None:
            return existing, False
        self._check_rate(run_id, sender)
        recipients = await self._recipients(run_id, sender, recipient, type)
        message = BoardMessage(
            id=f"msg-{secrets.token_hex(8)}",
            sender=sender,
            sender_message_id=sender_message_id,
            recipient=recipient,
            type=type,
            payload=payload,
            created_at=utc_now_iso(),
        )
        try:
            async with self._db.writer.begin() as conn:
                await conn.execute(
                    insert(board_messages).values(
                        run_id=run_id,
                        id=message.id,
                        sender=sender,
                        sender_message_id=sender_message_id,
                        recipient=recipient,
                        type=type,
                        payload=payload,
                        created_at=message.created_at,
                    )
                )
                if recipients:
                    await conn.execute(
                        insert(deliveries),
                        [
                            {
                                "run_id": run_id,
                                "message_id": message.id,
                                "team_id": team,
                                "status": "pending",
                                "created_at": message.created_at,
                            }
                            for team in recipients
                        ],
                    )
        except IntegrityError:  # a concurrent resend won the race: same message
            stored = await self._by_sender_id(run_id, sender, sender_message_id)
            assert stored is not None
            return stored, False
        summary = str(payload.get("summary") or payload.get("text") or "")[:300]
        await self._events.append(
            run_id,
            A2AMessage(
                message_id=message.id,
                to=recipient,
                recipients=recipients,
                type=type,
                summary=summary,
            ),
            team=sender if sender not in ("judger", "lab") else None,
            dedup_key=f"a2a.message:{message.id}",
        )
        return message, True

    async def _by_sender_id(
        self, run_id: str, sender: str, sender_message_id: str
    ) -> BoardMessage | None:
        async with self._db.reader.connect() as conn:
            row = (
                await conn.execute(
                    select(board_messages).where(
                        board_messages.c.run_id == run_id,
                        board_messages.c.sender == sender,
                        board_messages.c.sender_message_id == sender_message_id,
                    )
                )
            ).one_or_none()
        return _message(row) if row is not None else None

    async def deliver(self, run_id: str, team_id: str, call_id: str) -> list[BoardMessage]:
        """Messages for `team_id`: pending ones, plus those this same call delivered before
        (a tool call re-run after a crash sees the same messages again)."""
        async with self._db.writer.begin() as conn:
            rows = (
                await conn.execute(
                    select(board_messages, deliveries.c.status, deliveries.c.delivered_by)
                    .join(
                        deliveries,
                        (deliveries.c.run_id == board_messages.c.run_id)
                        & (deliveries.c.message_id == board_messages.c.id),
                    )
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        (deliveries.c.status == "pending")
                        | (
                            (deliveries.c.status == "delivered")
                            & (deliveries.c.delivered_by == call_id)
                        ),
                    )
                    .order_by(board_messages.c.created_at)
                )
            ).all()
            fresh = [r.id for r in rows if r.status == "pending"]
            if fresh:
                await conn.execute(
                    update(deliveries)
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.message_id.in_(fresh),
                        deliveries.c.status == "pending",
                    )
                    .values(status="delivered", delivered_by=call_id, delivered_at=utc_now_iso())
                )
        messages = [_message(r) for r in rows]
        if any(m.type == "feedback" for m in messages):
            crash_point("feedback.delivering")
        for message in messages:
            await self._events.append(
                run_id,
                A2ADelivered(message_id=message.id, sender=message.sender, type=message.type),
                team=team_id,
                dedup_key=f"a2a.delivered:{team_id}:{message.id}",
            )
        return messages

    async def ack(self, run_id: str, team_id: str, call_ids: list[str]) -> int:
        """Acknowledge what these calls delivered; each delivery is acked once, ever."""
        if not call_ids:
            return 0
        async with self._db.reader.connect() as conn:
            rows = (
                await conn.execute(
                    select(deliveries.c.message_id, board_messages.c.type)
                    .join(
                        board_messages,
                        (board_messages.c.run_id == deliveries.c.run_id)
                        & (board_messages.c.id == deliveries.c.message_id),
                    )
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.status == "delivered",
                        deliveries.c.delivered_by.in_(call_ids),
                    )
                )
            ).all()
        ids = [r.message_id for r in rows]
        if not ids:
            return 0
        # the events first, the rows last: a lab killed in between finds the deliveries still
        # "delivered", acks them again at the agent's next step, and the events are
        # deduplicated, so each delivery is acknowledged exactly once in the log too
        for message_id in ids:
            await self._events.append(
                run_id,
                A2AAcked(message_id=message_id),
                team=team_id,
                dedup_key=f"a2a.acked:{team_id}:{message_id}",
            )
        if any(r.type == "feedback" for r in rows):
            crash_point("feedback.delivering")
        async with self._db.writer.begin() as conn:
            await conn.execute(
                update(deliveries)
                .where(
                    deliveries.c.run_id == run_id,
                    deliveries.c.team_id == team_id,
                    deliveries.c.message_id.in_(ids),
                    deliveries.c.status == "delivered",
                )
                .values(status="acked", acked_at=utc_now_iso())
            )
        return len(ids)

    async def release_unseen(self, run_id: str, team_id: str, seen_calls: set[str]) -> int:
        """Deliveries handed to a tool call whose result the agent never got (the lab died
        during the call, or the call failed) go back to pending, so the next read delivers
        them; they were never acknowledged. Called before a team's turn, when none of its
        calls runs."""
        async with self._db.reader.connect() as conn:
            rows = (
                await conn.execute(
                    select(deliveries.c.message_id, deliveries.c.delivered_by).where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.status == "delivered",
                    )
                )
            ).all()
        unseen = [r for r in rows if r.delivered_by not in seen_calls]
        for row in unseen:
            await self._events.append(
                run_id,
                A2AReleased(message_id=row.message_id, call_id=row.delivered_by),
                team=team_id,
                dedup_key=f"a2a.released:{team_id}:{row.message_id}:{row.delivered_by}",
            )
            async with self._db.writer.begin() as conn:
                await conn.execute(
                    update(deliveries)
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.message_id == row.message_id,
                        deliveries.c.status == "delivered",
                        deliveries.c.delivered_by == row.delivered_by,
                    )
                    .values(status="pending", delivered_by=None, delivered_at=None)
                )
        return len(unseen)

    async def pending(self, run_id: str, team_id: str) -> int:
        """Messages waiting for `team_id` (not yet delivered)."""
        async with self._db.reader.connect() as conn:
            return (
                await conn.execute(
                    select(func.count())
                    .select_from(deliveries)
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.status == "pending",
                    )
                )
            ).scalar_one()

    async def delivery_states(self, run_id: str, message_id: str) -> dict[str, str]:
        async with self._db.reader.connect() as conn:
            rows = (
                await conn.execute(
                    select(deliveries.c.team_id, deliveries.c.status).where(
                        deliveries.c.run_id == run_id, deliveries.c.message_id == message_id
                    )
                )
            ).all()
        return {r.team_id: r.status for r in rows}

    async def messages(self, run_id: str, type: str | None = None) -> list[BoardMessage]:
        query = select(board_messages).where(board_messages.c.run_id == run_id)
        if type is not None:
            query = query.where(board_messages.c.type == type)
        async with self._db.reader.connect() as conn:
            rows = (await conn.execute(query.order_by(board_messages.c.created_at))).all()
        return [_message(r) for r in rows]
