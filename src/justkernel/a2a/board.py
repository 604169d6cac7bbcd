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
from typing import Any

from justkernel.a2a.policies import (
    DEFAULT_POLICY,
    SharingPolicy,
    can_receive_from_others,
    push_recipients,
)
from justkernel.core.events.collab import A2AAcked, A2ADelivered, A2AMessage, A2AReleased
from justkernel.events import EventLog, NewEvent
from justkernel.faults import crash_point
from justkernel.store.board import BoardMessage, BoardStore
from justkernel.store.database import Database
from justkernel.store.runs import utc_now_iso
from justkernel.store.teams import TeamRegistry

MESSAGE_TYPES = ("message", "candidate", "experience", "feedback")
RATE_WINDOW_SECONDS = 60.0


SUMMARY_CODES = ("feedback_own", "feedback_public")
LAB_SENDERS = ("judger", "lab")


def coded_summary(sender: str, payload: dict[str, Any]) -> tuple[str | None, dict[str, str] | None]:
    """The summary's code and values, when the lab itself wrote them (the Judger's feedback):
    the page translates those; a team's words are shown as written, whatever keys it sets."""
    code = payload.get("summary_code")
    params = payload.get("summary_params")
    if sender not in LAB_SENDERS or code not in SUMMARY_CODES or not isinstance(params, dict):
        return None, None
    return str(code), {str(k): str(v)[:120] for k, v in params.items()}


class BoardError(ValueError):
    """A post the board refuses; the message is safe to show the agent."""


class LabBoard:
    """Who receives what (the teams' sharing policies), rate limits, events and crash points,
    over the board's rows (`store.board.BoardStore`)."""

    def __init__(
        self,
        db: Database,
        events: EventLog,
        registry: TeamRegistry,
        *,
        rate_limit_per_minute: int = 30,
    ) -> None:
        self._rows = BoardStore(db)
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
        excluding: str | None = None,
    ) -> tuple[BoardMessage, bool]:
        """Store a message and its deliveries; a resend with the same id changes nothing.

        `excluding` leaves one team out of a broadcast ("all"): the Judger's public copy of an
        official result skips the team that submitted it, whose own message already says it in
        full, so every team receives each result once (a broadcast nobody else may receive is
        still stored, with no delivery: it is the run's public record of the result)."""
        if type not in MESSAGE_TYPES:
            raise BoardError(f"unknown message type {type!r}")
        existing = await self._rows.by_sender_id(run_id, sender, sender_message_id)
        if existing is not None:
            return existing, False
        self._check_rate(run_id, sender)
        recipients = await self._recipients(run_id, sender, recipient, type)
        if recipient == "all" and excluding is not None:
            recipients = [t for t in recipients if t != excluding]
        message = BoardMessage(
            id=f"msg-{secrets.token_hex(8)}",
            sender=sender,
            sender_message_id=sender_message_id,
            recipient=recipient,
            type=type,
            payload=payload,
            created_at=utc_now_iso(),
        )
        if not await self._rows.add(run_id, message, recipients):
            # a concurrent resend won the race: same message
            stored = await self._rows.by_sender_id(run_id, sender, sender_message_id)
            assert stored is not None
            return stored, False
        summary = str(payload.get("summary") or payload.get("text") or "")[:300]
        code, params = coded_summary(sender, payload)
        await self._events.append(
            run_id,
            A2AMessage(
                message_id=message.id,
                to=recipient,
                recipients=recipients,
                type=type,
                summary=summary,
                summary_code=code,
                summary_params=params,
            ),
            team=sender if sender not in ("judger", "lab") else None,
            dedup_key=f"a2a.message:{message.id}",
        )
        return message, True

    async def deliver(
        self, run_id: str, team_id: str, call_id: str, *, only: list[str] | None = None
    ) -> list[BoardMessage]:
        """Messages for `team_id`: pending ones (of the ids `only`, when given), plus those
        this same call delivered before (a tool call re-run after a crash sees the same
        messages again)."""
        messages = await self._rows.deliver(run_id, team_id, call_id, only)
        if any(m.type == "feedback" for m in messages):
            crash_point("feedback.delivering")
        await self._events.append_many(  # one transaction for the read's events
            run_id,
            [
                NewEvent.of(
                    A2ADelivered(message_id=m.id, sender=m.sender, type=m.type),
                    team_id,
                    f"a2a.delivered:{team_id}:{m.id}",
                )
                for m in messages
            ],
        )
        return messages

    async def ack(self, run_id: str, team_id: str, call_ids: list[str]) -> int:
        """Acknowledge what these calls delivered; each delivery is acked once, ever."""
        if not call_ids:
            return 0
        rows = await self._rows.delivered(run_id, team_id, call_ids)
        ids = [r.message_id for r in rows]
        if not ids:
            return 0
        # the events first, the rows last: a lab killed in between finds the deliveries still
        # "delivered", acks them again at the agent's next step, and the events are
        # deduplicated, so each delivery is acknowledged exactly once in the log too
        await self._events.append_many(
            run_id,
            [NewEvent.of(A2AAcked(message_id=m), team_id, f"a2a.acked:{team_id}:{m}") for m in ids],
        )
        if any(r.type == "feedback" for r in rows):
            crash_point("feedback.delivering")
        await self._rows.mark_acked(run_id, team_id, ids)
        return len(ids)

    async def release_unseen(self, run_id: str, team_id: str, seen_calls: set[str]) -> int:
        """Deliveries handed to a tool call whose result the agent never got (the lab died
        during the call, or the call failed) go back to pending, so the next read delivers
        them; they were never acknowledged. Called before a team's turn, when none of its
        calls runs."""
        rows = await self._rows.delivered(run_id, team_id)
        unseen = [r for r in rows if r.delivered_by not in seen_calls]
        # the events first, the rows last (as `ack`): a lab killed in between releases again
        await self._events.append_many(
            run_id,
            [
                NewEvent.of(
                    A2AReleased(message_id=r.message_id, call_id=r.delivered_by),
                    team_id,
                    f"a2a.released:{team_id}:{r.message_id}:{r.delivered_by}",
                )
                for r in unseen
            ],
        )
        for row in unseen:
            await self._rows.release(run_id, team_id, row)
        return len(unseen)

    async def news(self, run_id: str, team_id: str) -> list[BoardMessage]:
        """What waits for `team_id`, oldest first, still pending (a woken turn's prompt names
        it; `ack_shown` settles it)."""
        return await self._rows.pending_messages(run_id, team_id)

    async def ack_shown(
        self, run_id: str, team_id: str, call_id: str, message_ids: list[str]
    ) -> int:
        """The messages a turn's prompt showed the team, delivered by that turn (`call_id`)
        and acknowledged, unless a read of the team's got them first: news shown once never
        stays pending, nor wakes the team again."""
        if not message_ids:
            return 0
        await self.deliver(run_id, team_id, call_id, only=message_ids)
        return await self.ack(run_id, team_id, [call_id])

    async def pending(self, run_id: str, team_id: str) -> int:
        """Messages waiting for `team_id` (not yet delivered)."""
        return await self._rows.pending(run_id, team_id)

    async def pending_by_team(self, run_id: str) -> dict[str, int]:
        """Messages waiting, per team of the run that has any (one read for all the teams)."""
        return await self._rows.pending_by_team(run_id)

    async def delivery_states(self, run_id: str, message_id: str) -> dict[str, str]:
        return await self._rows.delivery_states(run_id, message_id)

    async def messages(self, run_id: str, type: str | None = None) -> list[BoardMessage]:
        return await self._rows.messages(run_id, type)
