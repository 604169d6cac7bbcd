"""Typed event payloads: one pydantic model per event kind (in `runs`, `agents`, `collab`,
`approvals`), the registry kind -> model, and `parse_payload` for readers. docs/events.md is
generated from these models (`python tools/gen_events_doc.py`); a test fails when the two differ."""

from justkernel.core.events import agents, approvals, collab, runs
from justkernel.core.events.base import (
    PAYLOADS,
    EventPayload,
    PayloadPart,
    UntypedPayload,
    parse_payload,
    parse_payload_json,
    payload_model,
    schema_version_of,
)

AREAS = (runs, agents, collab, approvals)  # importing them registers every kind, in catalog order
# the newest schema version of any kind: what this lab writes and the most it reads
NEWEST_SCHEMA_VERSION = max(model.SCHEMA_VERSION for model in PAYLOADS.values())

__all__ = [
    "AREAS",
    "NEWEST_SCHEMA_VERSION",
    "PAYLOADS",
    "EventPayload",
    "PayloadPart",
    "UntypedPayload",
    "parse_payload",
    "parse_payload_json",
    "payload_model",
    "schema_version_of",
]
