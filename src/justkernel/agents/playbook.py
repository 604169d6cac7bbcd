"""The offline playbook: a deterministic, seeded engineer that optimizes the kernel for real.

A playbook is an ordered list of optimization steps (`resources/playbook/<operator>/` for the C
port, `.../<operator>/ascendc/` for the Ascend C project), each a complete set of editable files
with the hypothesis behind it. A team's route picks one alternative per step from its seed, so
teams differ; a step with `known_by` < 1 is known to that share of seeds only (teams have
different ideas). Steps build on each other, so a team that lacks one plays its later steps only
after it has adopted another team's better candidate. The route becomes a linear list of
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
from functools import cache, lru_cache
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
    builds_on: str = "baseline"  # the step whose files this one starts from


@dataclass(frozen=True)
class Playbook:
    operator: str
    sequence: tuple[tuple[str, ...], ...]  # per position: the step and its alternatives
    steps: dict[str, Step] = field(hash=False)
    baseline_files: dict[str, str] = field(hash=False)
    target: str = "cpu"
    known_by: tuple[float, ...] = ()  # per position: share of seeds that know it (default 1)

    def positions(self, seed: int) -> list[Step | None]:
        """Per position the alternative the team's seed picks, or None when it does not know
        the step. Knowledge has its own random stream, so a playbook without `known_by` routes
        exactly as before it existed."""
        rng = random.Random(seed)
        knows = random.Random(f"known:{seed}")
        out: list[Step | None] = []
        for index, choices in enumerate(self.sequence):
            step = self.steps[rng.choice(choices)]
            share = self.known_by[index] if index < len(self.known_by) else 1.0
            known = share >= 1.0 or knows.random() < share
            out.append(step if known else None)
        return out

    def route(self, seed: int) -> list[Step]:
        """The steps the team's seed knows, one alternative per known position."""
        return [step for step in self.positions(seed) if step is not None]


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
                builds_on=raw.get("builds_on", "baseline"),
            )
        except KeyError as exc:
            raise PlaybookError(f"{where} lacks {exc.args[0]}") from exc
        if not step.files:
            raise PlaybookError(f"{where} ({step.id}): no files under {raw['path']}")
        steps[step.id] = step
    sequence = []
    known_by = []
    for index, raw in enumerate(data.get("steps", [])):
        choices = (raw["id"], *raw.get("alternatives", []))
        unknown = [c for c in choices if c not in steps]
        if unknown:
            raise PlaybookError(f"{path}: steps[{index}] names unknown alternatives {unknown}")
        sequence.append(choices)
        share = raw.get("known_by", 1.0)
        if not isinstance(share, int | float) or not 0.0 < share <= 1.0:
            raise PlaybookError(f"{path}: steps[{index}] known_by must be in (0, 1], not {share!r}")
        known_by.append(float(share))
    if not sequence:
        raise PlaybookError(f"{path}: no [[steps]]")
    definition = load_operator(operator)
    project = (definition if target == "cpu" else definition.ascendc_target()).project_dir
    baseline = {
        rel: (project / rel).read_text(encoding="utf-8")
        for rel in sorted({r for s in steps.values() for r in s.files})
    }
    return Playbook(operator, tuple(sequence), steps, baseline, target, tuple(known_by))


# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One model response of the route: tool calls, or a text that ends the turn.

    `block` groups the actions of one evaluation: "baseline", a step id, "adopt:<n>" (trying
    the best public candidate of another team before step n), or, where the team does not know
    step n but knows a later one, "wait:<n>:<k>" (end the turn until news arrives) and
    "adopt:<n>:<k>" (look again)."""

    kind: str  # read_spec, todos, list_cases, plan, edit, compile, probe, full, results,
    #            decide, end_turn, inbox, fetch, adopt_write, wait, finish
    step: Step | None = None  # the step this action belongs to (None: the baseline)
    block: str = "baseline"


GAP_POLLS = 24  # looks again at a gap, each time news wakes the waiting team


def _adopt_block(step: Step | None, block: str) -> list[Action]:
    kinds = ("inbox", "fetch", "plan", "adopt_write", "full", "decide")
    return [Action(kind, step, block) for kind in kinds]


@lru_cache(maxsize=256)
def route_actions(route: tuple[Step | None, ...]) -> tuple[Action, ...]:
    """The route's actions. A position the team does not know (None) keeps only its adopt
    block: a look at what the others share, no step of its own; when the team knows a later
    step (which builds on this one), it then waits for news and looks again, GAP_POLLS times
    (and as often after its last look, before it finishes).

    Computed once per route: the offline model reads them at every response (a thousand
    actions for a team that waits on gaps)."""
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
        actions += _adopt_block(step, f"adopt:{n}")
        if step is None:
            if any(later is not None for later in route[n + 1 :]):
                for k in range(1, GAP_POLLS + 1):
                    actions.append(Action("wait", None, f"wait:{n}:{k}"))
                    actions += _adopt_block(None, f"adopt:{n}:{k}")
            continue
        actions += [
            Action("plan", step, step.id),
            Action("edit", step, step.id),
            Action("compile", step, step.id),
            Action("probe", step, step.id),
            Action("full", step, step.id),
            Action("results", step, step.id),
            Action("decide", step, step.id),
            Action("end_turn", step, step.id),
        ]
    # a last look at what the others found before calling it done; a team that lacks a step
    # keeps watching: it ends its turns as done and looks again when news wakes it
    actions += _adopt_block(None, "adopt:final")
    if any(step is None for step in route):
        for k in range(1, GAP_POLLS + 1):
            actions.append(Action("wait", None, f"wait:final:{k}"))
            actions += _adopt_block(None, f"adopt:final:{k}")
    actions.append(Action("finish", None, "finish"))
    return tuple(actions)


def block_position(block: str) -> int | None:
    """The route position an adopt or wait block belongs to ("adopt:3:1" -> 3), else None."""
    head, _, rest = block.partition(":")
    if head not in ("adopt", "wait"):
        return None
    number = rest.split(":", 1)[0]
    return int(number) if number.isdigit() else None


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
