"""The base of every event payload model and the registry kind -> model.

A payload model names the fields one event kind carries, with a description each (the
catalog, docs/events.md, is generated from them) and the kind's schema version. Writers build
payloads from these models and readers parse through them, so the two cannot drift apart.

Old logs must keep parsing: every field is optional (a field a log lacks reads as None) and
fields a model does not name are kept (`extra="allow"`), so a payload read and dumped again
is the payload that was written.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

# A JSON number: int stays int and float stays float (pydantic's smart union), so a payload
# parsed and dumped again keeps its exact text.
Number = int | float

CURRENT_SCHEMA_VERSION = 1  # of every kind so far; a rename or removal bumps one kind's


class PayloadPart(BaseModel):
    """A nested record inside a payload (usage, a receipt summary, a test point)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    def to_payload(self) -> dict[str, Any]:
        """The JSON object to store: the fields the writer set (a field it left out stays
        out, as before the models existed) and any extra ones."""
        return self.model_dump(mode="json", exclude_unset=True)


class EventPayload(PayloadPart):
    """The payload of one event kind. A subclass that sets `KIND` is registered."""

    KIND: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = CURRENT_SCHEMA_VERSION
    AREA: ClassVar[str] = ""  # the catalog section it is listed in
    TEAM: ClassVar[str] = "—"  # what the event's team column holds, for the catalog

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = cls.__dict__.get("KIND")
        if not kind:
            return
        if kind in PAYLOADS:
            raise TypeError(f"event kind {kind!r} has two payload models")
        PAYLOADS[kind] = cls


class UntypedPayload(EventPayload):
    """A kind without a model (a test's own kind, or one from a newer lab): fields as given."""


PAYLOADS: dict[str, type[EventPayload]] = {}


def payload_model(kind: str) -> type[EventPayload] | None:
    """The model of `kind`, or None for a kind the catalog does not list."""
    return PAYLOADS.get(kind)


def schema_version_of(kind: str) -> int:
    """The schema version a new event of `kind` is written with."""
    model = PAYLOADS.get(kind)
    return model.SCHEMA_VERSION if model is not None else CURRENT_SCHEMA_VERSION


def parse_payload(kind: str, payload: dict[str, Any]) -> EventPayload:
    """`payload` as the model of `kind` (an `UntypedPayload` for an unknown kind).

    Raises pydantic's `ValidationError` when a field has the wrong type (a hand-edited or
    hostile log); readers skip such an event rather than guess.
    """
    return PAYLOADS.get(kind, UntypedPayload).model_validate(payload)


def described(description: str, default: Any = None) -> Any:
    """An optional field (None when a log lacks it) with the catalog's description."""
    return Field(default=default, description=description)


def parse_payload_json(kind: str, payload_json: str | bytes) -> EventPayload:
    """`parse_payload` straight from the stored JSON text (one pass, no dict in between)."""
    return PAYLOADS.get(kind, UntypedPayload).model_validate_json(payload_json)
