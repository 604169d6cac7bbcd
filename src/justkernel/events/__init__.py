"""The append-only event log every part writes to, with live fan-out and export/import."""

from justkernel.events.bus import EventBus
from justkernel.events.log import EventLog, NewEvent, ReadOnlyRun
from justkernel.events.model import EVENT_SCHEMA_VERSION, Event, encode_payload

__all__ = [
    "EVENT_SCHEMA_VERSION",
    "Event",
    "EventBus",
    "EventLog",
    "NewEvent",
    "ReadOnlyRun",
    "encode_payload",
]
