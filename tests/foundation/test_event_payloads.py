"""The event payload models are the one description of the log: docs/events.md is generated
from them, old logs (the bundled demo) parse through them unchanged, and the dashboard's
decoder (eventview.js) reads only fields the models' JSON schema names."""

from __future__ import annotations

import ast
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from justkernel.core.events import PAYLOADS, UntypedPayload, parse_payload
from justkernel.core.events.collab import OfficialResult
from justkernel.core.events.doc import render_catalog
from justkernel.core.events.runs import TeamRegistered, TeamResumed, TeamTurn
from justkernel.events import Event, NewEvent
from justkernel.events.model import encode_payload
from justkernel.lab import Lab
from justkernel.paths import resources_dir
from justkernel.reports.fold import RunState

ROOT = Path(__file__).resolve().parents[2]
EVENTVIEW = resources_dir() / "web" / "js" / "live" / "eventview.js"
JS_LISTS = ("map", "filter", "some", "every", "forEach")


def test_docs_events_md_is_generated_from_the_models() -> None:
    page = (ROOT / "docs" / "events.md").read_text(encoding="utf-8")
    assert page == render_catalog(), "run: uv run python tools/gen_events_doc.py"


def test_the_catalog_lists_every_kind_with_its_version() -> None:
    page = render_catalog()
    for kind, model in PAYLOADS.items():
        assert f"| `{kind}` | {model.SCHEMA_VERSION} |" in page
    assert len(PAYLOADS) >= 35


def test_the_demo_log_parses_and_dumps_back_byte_for_byte() -> None:
    with zipfile.ZipFile(resources_dir() / "demo" / "session.jkbundle") as bundle:
        lines = bundle.read("events.jsonl").decode().splitlines()
    kinds = set()
    for line in lines:
        event = json.loads(line)
        model = parse_payload(event["kind"], event["payload"])
        assert not isinstance(model, UntypedPayload), event["kind"]
        assert encode_payload(model.to_payload()) == encode_payload(event["payload"])
        kinds.add(event["kind"])
    assert len(kinds) > 15


def test_missing_fields_read_as_none_and_unknown_fields_are_kept() -> None:
    old = parse_payload("team.registered", {"display_name": "A", "legacy": [1, 2]})
    assert isinstance(old, TeamRegistered)
    assert old.provider is None and old.config is None
    assert old.to_payload() == {"display_name": "A", "legacy": [1, 2]}
    # a writer's payload holds exactly what it set: the nulls it passed, none it did not
    assert TeamResumed().to_payload() == {}
    result = OfficialResult(submission_id="s1", prof_sum_us=None, points=[{"id": "p1"}])
    assert result.to_payload() == {
        "submission_id": "s1",
        "prof_sum_us": None,
        "points": [{"id": "p1"}],
    }


def test_a_payload_of_the_wrong_type_is_refused_and_an_unknown_kind_is_untyped() -> None:
    with pytest.raises(ValidationError):
        parse_payload("experiment.planned", {"experiment": "not a number"})
    assert isinstance(parse_payload("test.kind", {"x": 1}), UntypedPayload)
    assert parse_payload("test.kind", {"x": 1}).to_payload() == {"x": 1}


def test_numbers_keep_their_json_type() -> None:
    payload = {"seconds": 5}
    assert encode_payload(parse_payload("run.dispatch_started", payload).to_payload()) == (
        '{"seconds":5}'
    )
    assert parse_payload("run.dispatch_started", {"seconds": 2.5}).to_payload() == {"seconds": 2.5}


# -- the dashboard's decoder against the schema ----------------------------------------------


def _render_entries(source: str) -> dict[str, str]:
    """Each `"kind": (p) => ...` entry of eventview.js's RENDER table, by kind."""
    table = source[source.index("const RENDER = {") : source.index("\n};", source.index("RENDER"))]
    starts = list(re.finditer(r'^  "([a-z0-9_]+\.[a-z0-9_]+)": \(p\) =>', table, re.MULTILINE))
    assert starts, "no RENDER entries found in eventview.js"
    ends = [m.start() for m in starts[1:]] + [len(table)]
    return {m.group(1): table[m.end() : end] for m, end in zip(starts, ends, strict=True)}


class _Schema:
    """Walks a JSON schema: a property's schema, an array's items, a map's values."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.defs = root.get("$defs", {})

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            return self.resolve(self.defs[node["$ref"].rsplit("/", 1)[-1]])
        options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
        return self.resolve(options[0]) if len(options) == 1 else node

    def inner(self, node: dict[str, Any]) -> dict[str, Any]:
        """An array's items, else the node itself."""
        node = self.resolve(node)
        return self.resolve(node["items"]) if node.get("type") == "array" else node


def _fields_read(body: str, schema: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(variable, field, found) for every `v.field` read of a payload or a nested record."""
    walk = _Schema(schema)
    scope: dict[str, dict[str, Any]] = {"p": schema}

    def prop(var: str, name: str) -> dict[str, Any] | None:
        node = scope.get(var)
        return None if node is None else node.get("properties", {}).get(name)

    # aliases: `const r = p.receipt || {}`; items: `(p.points || []).map((pt) =>` and
    # `todos.filter((x) =>` where todos is an alias of a list
    for var, src, name in re.findall(r"const (\w+) = (\w+)\.(\w+)", body):
        found = prop(src, name)
        if found is not None:
            scope[var] = walk.resolve(found)
    lists = "|".join(JS_LISTS)
    pattern = rf"\(?(\w+)(?:\??\.(\w+))?(?: \|\| \[\])?\)?\??\.(?:{lists})\(\((\w+)\)"
    for _ in range(3):  # nested lists: an item's list's items
        for src, name, item in re.findall(pattern, body):
            node = prop(src, name) if name else scope.get(src)
            if node is not None and item not in scope:
                scope[item] = walk.inner(node)
    reads = []
    for var, name in re.findall(r"(?<![\w.])(\w+)\??\.(\w+)", body):
        node = scope.get(var)
        if node is None or node.get("type") == "array":
            continue  # not a payload record (t(), h(), num(), a list's .length)
        reads.append((var, name, name in node.get("properties", {})))
    return reads


def test_eventview_reads_only_fields_the_models_name() -> None:
    source = EVENTVIEW.read_text(encoding="utf-8")
    entries = _render_entries(source)
    judger_kinds = re.search(r"JUDGER_KINDS = \[(.*?)\]", source, re.DOTALL)
    assert judger_kinds is not None
    for kind in re.findall(r'"([a-z0-9_.]+)"', judger_kinds.group(1)):
        assert kind in PAYLOADS, f"JUDGER_KINDS names {kind}, which has no payload model"
    unknown = []
    checked = 0
    for kind, body in entries.items():
        assert kind in PAYLOADS, f"eventview.js renders {kind}, which has no payload model"
        for var, name, found in _fields_read(body, PAYLOADS[kind].model_json_schema()):
            checked += 1
            if not found:
                unknown.append(f"{kind}: {var}.{name}")
    assert not unknown, f"eventview.js reads fields no model names: {unknown}"
    assert checked > 100  # the extraction found the reads, nested ones included


def test_the_schema_check_catches_a_field_no_model_names() -> None:
    body = "(p) => ({ body: `${p.reason} ${p.reasn}`, more: (p.points || []).map((pt) => pt.tme) })"
    reads = _fields_read(body, OfficialResult.model_json_schema())
    missing = {f"{v}.{n}" for v, n, found in reads if not found}
    assert missing == {"p.reason", "p.reasn", "pt.tme"}


async def test_the_log_appends_a_payload_model_as_its_kind_and_version(lab: Lab) -> None:
    run = await lab.runs.create("typed")
    event = await lab.events.append(run.id, TeamTurn(state="started"), team="t1")
    assert (event.kind, event.team, event.payload) == ("team.turn", "t1", {"state": "started"})
    assert event.schema_version == TeamTurn.SCHEMA_VERSION
    (again,) = await lab.events.append_many(run.id, [NewEvent.of(TeamResumed(), "t1")])
    assert again.kind == "team.resumed" and again.payload_json == "{}"
    stored = await lab.events.read(run.id)
    assert [type(e.typed()) for e in stored] == [TeamTurn, TeamResumed]
    with pytest.raises(TypeError):
        await lab.events.append(run.id, TeamTurn(), {"state": "x"})


def test_the_fold_reads_through_the_models_and_skips_a_malformed_payload() -> None:
    def event(seq: int, kind: str, payload: dict[str, Any]) -> Event:
        return Event("r", seq, kind, "t1", "2026-01-01T00:00:00Z", 1, json.dumps(payload))

    state = RunState("r")
    state.feed(event(1, "team.registered", {"display_name": "One", "legacy": True}))
    state.feed(event(2, "experiment.planned", {"experiment": "x", "hypothesis": "h"}))
    state.feed(event(3, "team.turn_end", {"status": "done"}))
    assert state.teams["t1"].display_name == "One"
    assert state.teams["t1"].experiments == {} and state.malformed == 1
    assert (state.teams["t1"].status, state.last_seq) == ("done", 3)


def _raw_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, kind) of each append/NewEvent call that passes a catalogued kind as a string."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        position = {"append": 1, "NewEvent": 0}.get(name)
        if position is None or len(node.args) <= position:
            continue
        arg = node.args[position]
        if isinstance(arg, ast.Constant) and arg.value in PAYLOADS:
            found.append((node.lineno, arg.value))
    return found


def test_the_lab_writes_every_catalogued_kind_through_its_model() -> None:
    raw = []
    for path in sorted((ROOT / "src" / "justkernel").rglob("*.py")):
        for line, kind in _raw_writes(ast.parse(path.read_text(encoding="utf-8"))):
            raw.append(f"{path.relative_to(ROOT)}:{line} {kind}")
    assert not raw, f"append the payload model instead of a kind and a dict: {raw}"
    sample = 'await log.append(run_id, "team.turn", {"state": "x"}, team="t")'
    assert _raw_writes(ast.parse(sample)) == [(1, "team.turn")]
