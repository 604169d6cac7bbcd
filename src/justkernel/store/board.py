"""The board's rows (tables `board_messages` and `deliveries`): a message stored once per
(sender, sender's message id), one delivery row per recipient, and each delivery's way
pending → delivered (by one tool call) → acked, or back to pending when its call's result never
reached the agent. Who may receive what, rate limits, events and crash points are the board's
(`a2a.board.LabBoard`); this module only keeps the rows.
"""

from __future__ import annotations

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.core.records.board import BoardMessage, Delivery
from justkernel.store.database import Database, where_given
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import board_messages, deliveries

_PENDING = deliveries.c.status == "pending"
_DELIVERED = deliveries.c.status == "delivered"
_JOINED = (deliveries.c.run_id == board_messages.c.run_id) & (
    deliveries.c.message_id == board_messages.c.id
)


class BoardStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, run_id: str, message: BoardMessage, recipients: list[str]) -> bool:
        """Store a message and a pending delivery per recipient, in one transaction; False
        when a message with the same (sender, sender's id) is already stored."""
        try:
            async with self._db.writer.begin() as conn:
                await conn.execute(
                    insert(board_messages).values(
                        run_id=run_id,
                        id=message.id,
                        sender=message.sender,
                        sender_message_id=message.sender_message_id,
                        recipient=message.recipient,
                        type=message.type,
                        payload=message.payload,
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
        except IntegrityError:
            return False
        return True

    async def by_sender_id(
        self, run_id: str, sender: str, sender_message_id: str
    ) -> BoardMessage | None:
        return await self._db.record(
            BoardMessage,
            select(board_messages).where(
                board_messages.c.run_id == run_id,
                board_messages.c.sender == sender,
                board_messages.c.sender_message_id == sender_message_id,
            ),
        )

    async def deliver(
        self, run_id: str, team_id: str, call_id: str, only: list[str] | None = None
    ) -> list[BoardMessage]:
        """Pending messages for the team (of the ids `only`, when given), now delivered by
        `call_id`, plus those the same call delivered before (a re-run call sees the same
        messages), oldest first."""
        query = (
            select(board_messages, deliveries.c.status)
            .join(deliveries, _JOINED)
            .where(
                deliveries.c.run_id == run_id,
                deliveries.c.team_id == team_id,
                _PENDING | (_DELIVERED & (deliveries.c.delivered_by == call_id)),
            )
            .order_by(board_messages.c.created_at)
        )
        if only is not None:
            query = query.where(deliveries.c.message_id.in_(only))
        async with self._db.writer.begin() as conn:
            rows = (await conn.execute(query)).all()
            fresh = [r.id for r in rows if r.status == "pending"]
            if fresh:
                await conn.execute(
                    update(deliveries)
                    .where(
                        deliveries.c.run_id == run_id,
                        deliveries.c.team_id == team_id,
                        deliveries.c.message_id.in_(fresh),
                        _PENDING,
                    )
                    .values(status="delivered", delivered_by=call_id, delivered_at=utc_now_iso())
                )
        return BoardMessage.from_rows(rows)

    async def delivered(
        self, run_id: str, team_id: str, call_ids: list[str] | None = None
    ) -> list[Delivery]:
        """The team's deliveries in `delivered` (only those of `call_ids`, when given)."""
        query = (
            select(deliveries.c.message_id, deliveries.c.delivered_by, board_messages.c.type)
            .join(board_messages, _JOINED)
            .where(deliveries.c.run_id == run_id, deliveries.c.team_id == team_id, _DELIVERED)
        )
        if call_ids is not None:
            query = query.where(deliveries.c.delivered_by.in_(call_ids))
        return await self._db.records(Delivery, query)

    async def mark_acked(self, run_id: str, team_id: str, message_ids: list[str]) -> None:
        await self._db.write(
            update(deliveries)
            .where(
                deliveries.c.run_id == run_id,
                deliveries.c.team_id == team_id,
                deliveries.c.message_id.in_(message_ids),
                _DELIVERED,
            )
            .values(status="acked", acked_at=utc_now_iso())
        )

    async def release(self, run_id: str, team_id: str, delivery: Delivery) -> None:
        """Back to pending, if the delivery is still the one that call was handed."""
        await self._db.write(
            update(deliveries)
            .where(
                deliveries.c.run_id == run_id,
                deliveries.c.team_id == team_id,
                deliveries.c.message_id == delivery.message_id,
                _DELIVERED,
                deliveries.c.delivered_by == delivery.delivered_by,
            )
            .values(status="pending", delivered_by=None, delivered_at=None)
        )

    async def pending_messages(self, run_id: str, team_id: str) -> list[BoardMessage]:
        """The team's pending messages, oldest first, left pending."""
        return await self._db.records(
            BoardMessage,
            select(board_messages)
            .join(deliveries, _JOINED)
            .where(deliveries.c.run_id == run_id, deliveries.c.team_id == team_id, _PENDING)
            .order_by(board_messages.c.created_at),
        )

    async def pending(self, run_id: str, team_id: str) -> int:
        return await self._db.scalar(
            select(func.count())
            .select_from(deliveries)
            .where(deliveries.c.run_id == run_id, deliveries.c.team_id == team_id)
            .where(_PENDING)
        )

    async def pending_by_team(self, run_id: str) -> dict[str, int]:
        """Every team's count of pending messages (teams with none are left out), one read."""
        rows = await self._db.fetch_all(
            select(deliveries.c.team_id, func.count())
            .where(deliveries.c.run_id == run_id)
            .where(_PENDING)
            .group_by(deliveries.c.team_id)
        )
        return {team: count for team, count in rows}

    async def delivery_states(self, run_id: str, message_id: str) -> dict[str, str]:
        rows = await self._db.fetch_all(
            select(deliveries.c.team_id, deliveries.c.status).where(
                deliveries.c.run_id == run_id, deliveries.c.message_id == message_id
            )
        )
        return {r.team_id: r.status for r in rows}

    async def messages(self, run_id: str, type: str | None = None) -> list[BoardMessage]:
        query = where_given(
            select(board_messages).where(board_messages.c.run_id == run_id),
            (board_messages.c.type, type),
        )
        return await self._db.records(BoardMessage, query.order_by(board_messages.c.created_at))
