"""The event record: what every part writes and what the dashboard, resume and replay read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from justkernel.core.events import NEWEST_SCHEMA_VERSION, EventPayload, parse_payload_json

EVENT_SCHEMA_VERSION = NEWEST_SCHEMA_VERSION  # each kind's own is its payload model's
BLOB_REFS_KEY = "blobs"  # payload key listing SHA-256s of blobs the event refers to


def encode_payload(payload: dict[str, Any]) -> str:
    """Canonical JSON text; stored as is, so exports reproduce it byte for byte."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Event:
    run_id: str
    seq: int
    kind: str
    team: str | None
    ts: str
    schema_version: int
    payload_json: str

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.payload_json)

    def typed(self) -> EventPayload:
        """The payload through its kind's model (docs/events.md); raises pydantic's
        ValidationError for a payload of the wrong shape."""
        return parse_payload_json(self.kind, self.payload_json)

    def blob_refs(self) -> list[str]:
        refs = self.payload.get(BLOB_REFS_KEY, [])
        return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []

    def to_json(self) -> str:
        """One line of the wire and export format; the payload text is embedded verbatim."""
        head = json.dumps(
            {
                "run_id": self.run_id,
                "seq": self.seq,
                "kind": self.kind,
                "team": self.team,
                "ts": self.ts,
                "schema_version": self.schema_version,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return f'{head[:-1]},"payload":{self.payload_json}}}'

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())
