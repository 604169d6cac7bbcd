"""`board` rows as records with no I/O: the store maps rows onto them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from justkernel.core.records.base import Record


@dataclass(frozen=True)
class BoardMessage(Record):
    # what an agent reads: the payload's fields beside the envelope's
    PUBLIC: ClassVar = {
        "id": "message_id",
        "sender": "from",
        "sender_message_id": None,
        "recipient": "to",
    }
    SPREAD: ClassVar = "payload"

    id: str
    sender: str  # a team id, "judger" or "lab"
    sender_message_id: str
    recipient: str  # a team id or "all"
    type: str
    payload: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class Delivery(Record):
    """A delivery handed to a tool call: its message, and the call (None once pending)."""

    message_id: str
    delivered_by: str | None
    type: str = ""
