"""Typed event payloads: one pydantic model per event kind (in `runs`, `agents`, `collab`),
the registry kind -> model, and `parse_payload` for readers. docs/events.md is generated from
these models (`python tools/gen_events_doc.py`); a test fails when the two differ."""

from justkernel.core.events import agents, collab, runs
from justkernel.core.events.base import (
    PAYLOADS,
    EventPayload,
    PayloadPart,
    UntypedPayload,
    parse_payload,
    payload_model,
)

AREAS = (runs, agents, collab)  # importing them registers every kind, in catalog order

__all__ = [
    "AREAS",
    "PAYLOADS",
    "EventPayload",
    "PayloadPart",
    "UntypedPayload",
    "parse_payload",
    "payload_model",
]
