"""An event as the page receives it (the events API and the stream): the stored line, and for
an older event that carries a reason as English words only, the code those words say
(`reason_code`, `reason_params`, read by `core.reasons.parse`), so the page translates codes
and never matches English. Newer events carry their code already and go out verbatim."""

from __future__ import annotations

import json

from justkernel.core.events.runs import REASON_TEXT_FIELDS
from justkernel.core.reasons import parse
from justkernel.events import Event


def wire_json(event: Event) -> str:
    """`event.to_json()`, with the reason's code added to an older reason-carrying event."""
    field = REASON_TEXT_FIELDS.get(event.kind)
    if field is None or '"reason_code"' in event.payload_json:
        return event.to_json()
    payload = event.payload
    found = parse(payload.get(field)) if isinstance(payload.get(field), str) else None
    if found is None:
        return event.to_json()
    payload.update(reason_code=found.code.value, reason_params=found.params)
    line = json.loads(event.to_json())
    line["payload"] = payload
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)
