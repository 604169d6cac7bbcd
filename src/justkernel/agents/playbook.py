"""The offline playbook: a deterministic, seeded engineer that optimizes the kernel for real.

A playbook is an ordered list of optimization steps (`resources/playbook/<operator>/`), each a
complete set of editable files with the hypothesis behind it. A team's route picks one
alternative per step from its seed, so teams differ. The route becomes a linear list of
actions; the model finds where it is from the ids of its own earlier tool calls
(`pb<index>_<n>`) and decides keep-or-revert from the tool results it can see, so it resumes
correctly after a restart and survives history summarisation of older turns.
"""

from __future__ import annotations

import json
import random
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from justkernel.operators import load_operator
from justkernel.paths import resources_dir

ID_PREFIX = "pb"
DONE_MARKER = "[done]"  # a team ends its reply with it when nothing is left to try


class PlaybookError(ValueError):
    """The playbook file is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    hypothesis: str
    change: str
    validation: str
    probe_cases: tuple[str, ...]
    expected: str
    files: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class Playbook:
    operator: str
    sequence: tuple[tuple[str, ...], ...]  # per position: the step and its alternatives
    steps: dict[str, Step] = field(hash=False)
    baseline_files: dict[str, str] = field(hash=False)

    def route(self, seed: int) -> list[Step]:
        """One alternative per position, chosen by the team's seed."""
        rng = random.Random(seed)
        return [self.steps[rng.choice(choices)] for choices in self.sequence]


def _read_files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


PLAYBOOK_TARGETS = ("cpu", "ascendc")


def playbook_folder(operator: str, target: str) -> Path:
    """`cpu` keeps its historical place (the C port's playbook); other targets a subfolder."""
    if target not in PLAYBOOK_TARGETS:
        raise PlaybookError(f"unknown playbook target {target!r} (one of {PLAYBOOK_TARGETS})")
    folder = resources_dir() / "playbook" / operator
    return folder if target == "cpu" else folder / target


@cache
def load_playbook(operator: str = "confusion_mul_grad", target: str = "cpu") -> Playbook:
    """The playbook of `operator` for `target`: "cpu" (the C port) or "ascendc" (the msopgen
    project, also what the cann toolchain builds); baselines come from that target's project."""
    folder = playbook_folder(operator, target)
    path = folder / "playbook.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PlaybookError(f"{path}: {exc}") from exc
    steps: dict[str, Step] = {}
    entries = [("steps", i, raw) for i, raw in enumerate(data.get("steps", []))]
    entries += [("alternatives", i, raw) for i, raw in enumerate(data.get("alternatives", []))]
    for table, index, raw in entries:
        where = f"{path}: {table}[{index}]"
        try:
            step = Step(
                id=raw["id"],
                title=raw["title"],
                hypothesis=" ".join(raw["hypothesis"].split()),
                change=" ".join(raw["change"].split()),
                validation=raw["validation"],
                probe_cases=tuple(raw.get("probe_cases", [])),
                expected=raw.get("expected", "faster"),
                files=_read_files(folder / raw["path"]),
            )
        except KeyError as exc:
            raise PlaybookError(f"{where} lacks {exc.args[0]}") from exc
        if not step.files:
            raise PlaybookError(f"{where} ({step.id}): no files under {raw['path']}")
        steps[step.id] = step
    sequence = []
    for index, raw in enumerate(data.get("steps", [])):
        choices = (raw["id"], *raw.get("alternatives", []))
        unknown = [c for c in choices if c not in steps]
        if unknown:
            raise PlaybookError(f"{path}: steps[{index}] names unknown alternatives {unknown}")
        sequence.append(choices)
    if not sequence:
        raise PlaybookError(f"{path}: no [[steps]]")
    definition = load_operator(operator)
    project = (definition if target == "cpu" else definition.ascendc_target()).project_dir
    baseline = {
        rel: (project / rel).read_text(encoding="utf-8")
        for rel in sorted({r for s in steps.values() for r in s.files})
    }
    return Playbook(operator, tuple(sequence), steps, baseline)


# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One model response of the route: tool calls, or a text that ends the turn.

    `block` groups the actions of one evaluation: "baseline", a step id, or "adopt:<n>" (trying
    the best public candidate of another team before step n)."""

    kind: str  # read_spec, todos, list_cases, plan, edit, compile, probe, full, results,
    #            decide, end_turn, inbox, fetch, adopt_write, finish
    step: Step | None = None  # the step this action belongs to (None: the baseline)
    block: str = "baseline"


def route_actions(route: Sequence[Step]) -> list[Action]:
    actions = [
        Action("read_spec"),
        Action("todos"),
        Action("list_cases"),
        Action("plan"),
        Action("full"),
        Action("results"),
        Action("end_turn"),
    ]
    for n, step in enumerate(route):
        adopt = f"adopt:{n}"
        actions += [
            Action("inbox", step, adopt),
            Action("fetch", step, adopt),
            Action("plan", step, adopt),
            Action("adopt_write", step, adopt),
            Action("full", step, adopt),
            Action("decide", step, adopt),
            Action("plan", step, step.id),
            Action("edit", step, step.id),
            Action("compile", step, step.id),
            Action("probe", step, step.id),
            Action("full", step, step.id),
            Action("results", step, step.id),
            Action("decide", step, step.id),
            Action("end_turn", step, step.id),
        ]
    final = "adopt:final"  # a last look at what the others found before calling it done
    actions += [
        Action("inbox", None, final),
        Action("fetch", None, final),
        Action("plan", None, final),
        Action("adopt_write", None, final),
        Action("full", None, final),
        Action("decide", None, final),
        Action("finish", None, "finish"),
    ]
    return actions


def call_id(index: int, n: int = 0) -> str:
    return f"{ID_PREFIX}{index}_{n}"


def parse_call_id(value: str | None) -> int | None:
    if not value or not value.startswith(ID_PREFIX):
        return None
    head = value[len(ID_PREFIX) :].split("_", 1)[0]
    return int(head) if head.isdigit() else None


@dataclass
class History:
    """What the model can see of its own past: the last action index and tool results."""

    last_index: int = -1
    results: dict[int, dict[str, Any]] = field(default_factory=dict)  # first call of a step
    calls: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    finish_rounds: int = 0  # inbox reads made at the final action so far
    finish_pending_result: bool = False  # the last message is such a read's result

    @classmethod
    def read(
        cls,
        messages: Sequence[BaseMessage],
        parsed_cache: dict[str, dict[str, Any]] | None = None,
    ) -> History:
        history = cls()
        finish = None
        for message in messages:
            history.finish_pending_result = False
            if isinstance(message, AIMessage):
                if message.tool_calls and (message.id or "").endswith("m"):
                    history.finish_rounds += 1
                    finish = message.tool_calls[0].get("id")
                indices = [parse_call_id(c.get("id")) for c in message.tool_calls]
                indices.append(parse_call_id(message.id))
                known = [i for i in indices if i is not None]
                if known:
                    history.last_index = max(history.last_index, max(known))
            elif isinstance(message, ToolMessage):
                index = parse_call_id(message.tool_call_id)
                if index is not None:
                    cache = parsed_cache if parsed_cache is not None else {}
                    parsed = cache.get(message.tool_call_id)
                    if parsed is None:  # tool results never change: parse each once
                        parsed = cache[message.tool_call_id] = _parse_result(message.content)
                    n = message.tool_call_id.rsplit("_", 1)[-1]
                    history.calls[(index, int(n) if n.isdigit() else 0)] = parsed
                    if n == "0":
                        history.results[index] = parsed
                    if message.tool_call_id == finish:
                        history.finish_pending_result = True
        return history


def _parse_result(content: Any) -> dict[str, Any]:
    if isinstance(content, list):
        content = "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    try:
        parsed = json.loads(content)
    except (TypeError, ValueError):
        return {"error": str(content)[:500]}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
