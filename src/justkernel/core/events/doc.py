"""The event catalog (docs/events.md) rendered from the payload models, so the page cannot
drift from what writers write and readers parse. `tools/gen_events_doc.py` writes the file;
a test fails when the file and `render_catalog()` differ."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic.fields import FieldInfo

from justkernel.core.events import AREAS
from justkernel.core.events.base import EventPayload, PayloadPart
from justkernel.core.reasons import SPECS

INTRO = """\
# Event catalog

Everything that happens is an event in the append-only log (`docs/architecture.md`). An event
is `(run_id, seq, kind, team, ts, schema_version, payload)`; this page lists the kinds, the
schema version of each and their payload fields. The dashboard, resume, the demo, replays and
reports read only these. Adding a field is compatible; renaming or removing one needs a new
`schema_version` for that kind.

Figures that were not measured are absent or `null`, never 0. Offline (scripted) model activity
carries `"offline": true`; simulated or demo runs carry `meta.simulated = true` on the run.

This page is generated from the payload models in `src/justkernel/core/events/` (one pydantic
model per kind; the descriptions are their `Field(description=...)`): edit a model, then run
`uv run python tools/gen_events_doc.py`. Writers build payloads from the models and readers
(`reports/fold.py`, `reports/judger_fold.py`) parse through them; every field may be missing
from an older log and then reads as `null`, and fields a model does not name are kept.
"""


def _strip_optional(annotation: Any) -> Any:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _shape(annotation: Any) -> tuple[str, Any]:
    """The name's suffix (`[]` a list, `{}` a map) and the type of its items."""
    annotation = _strip_optional(annotation)
    origin = typing.get_origin(annotation)
    if origin is list:
        return "[]", _strip_optional(typing.get_args(annotation)[0])
    if origin is dict:
        return "{}", _strip_optional(typing.get_args(annotation)[1])
    return "", annotation


def _part(item: Any) -> type[PayloadPart] | None:
    return item if isinstance(item, type) and issubclass(item, PayloadPart) else None


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _nested(part: type[PayloadPart]) -> str:
    names = []
    for name, info in part.model_fields.items():
        suffix, _item = _shape(info.annotation)
        names.append(f"{name}{suffix}: {info.description}" if info.description else name + suffix)
    return ", ".join(names)


def _field(name: str, info: FieldInfo) -> str:
    suffix, item = _shape(info.annotation)
    notes = [info.description] if info.description else []
    part = _part(item)
    if part is not None:
        notes.append(_nested(part))
    text = f"`{name}{suffix}`"
    return f"{text} ({'; '.join(notes)})" if notes else text


def _row(model: type[EventPayload]) -> str:
    lead = " ".join((model.__doc__ or "").split())
    fields = ", ".join(_field(name, info) for name, info in model.model_fields.items())
    cell = f"{lead} {fields}".strip() if fields else lead
    return f"| `{model.KIND}` | {model.SCHEMA_VERSION} | {model.TEAM} | {_escape(cell)} |"


def _models(module: types.ModuleType) -> list[type[EventPayload]]:
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, EventPayload)
        and value.__module__ == module.__name__
        and value.__dict__.get("KIND")
    ]
    return found  # definition order: vars() keeps it


def render_catalog() -> str:
    """The whole of docs/events.md."""
    parts = [INTRO]
    for module in AREAS:
        models = _models(module)
        parts.append(f"## {models[0].AREA}\n")
        rows = "\n".join(_row(m) for m in models)
        parts.append(f"| kind | version | team | payload |\n|---|---|---|---|\n{rows}\n")
    parts.append(_reason_codes())
    return "\n".join(parts)


REASONS_INTRO = """\
## Reason codes

Why a team or a run paused, stopped, failed or ended is written as a code with its values
(`reason_code`, `reason_params`; `src/justkernel/core/reasons.py` owns the list) beside the
English words (`reason`, or `detail` for `team.turn_end`, `message` for `watchdog.nudge`). The
dashboard and the reports translate the code. An event written before the codes has the words
only: the server reads them back into their code (`core.reasons.parse`) for the dashboard's
views and its events API, and words no code knows (a model's, a person's) are shown as written.
A `text` value (an error's message) is never translated; a `word` value is a code the page
translates (an error kind, a unit).
"""


def _reason_codes() -> str:
    rows = []
    for code, spec in SPECS.items():
        values = [f"`{name}` ({kind})" for name, kind in spec.params]
        values += [f"`{name}` ({kind}, optional)" for name, kind in spec.optional]
        rows.append(f"| `{code.value}` | {_escape(spec.template)} | {', '.join(values) or '—'} |")
    table = "| code | English | values |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    return f"{REASONS_INTRO}\n{table}"
