"""`offline`: a deterministic, seeded chat model that plays the optimization playbook.

It is a real LangChain chat model: the Deep Agents harness binds the same tools, sends the same
messages and executes the tool calls it emits exactly as for a remote model. Nothing leaves the
process and no key is needed; every event it causes is labelled offline. Token counts are
estimates (characters / 4), reported as such.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from justkernel.agents.playbook import (
    DONE_MARKER,
    Action,
    History,
    Playbook,
    Step,
    block_position,
    call_id,
    load_playbook,
    route_actions,
)

OFFLINE_PROVIDER = "justkernel-offline"


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


# (tool name, description, id of its argument model) -> (that model, kept alive; the schema)
ToolSchemas = dict[tuple[Any, Any, int], tuple[object, dict[str, Any]]]


class OfflinePlaybookModel(BaseChatModel):
    """Plays `playbook` along the route chosen by `seed`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    seed: int = 0
    operator: str = "confusion_mul_grad"
    target: str = "cpu"  # the playbook to play: "cpu" (C port) or "ascendc" (msopgen project)
    latency_seconds: float = Field(default=0.0, ge=0)
    model_name: str = "offline-playbook"
    _parsed: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    # tool -> its OpenAI schema: the agent binds the same tools (one shared graph's) at every
    # call, and converting them each time was a good part of a step's CPU; the teams of one
    # graph share it (`share_schemas`), so each tool is converted once per run, not per team
    _schemas: ToolSchemas = PrivateAttr(default_factory=dict)

    def share_schemas(self, schemas: ToolSchemas) -> OfflinePlaybookModel:
        """Convert tools into `schemas`, a cache other models of the same graph fill too."""
        self._schemas = schemas
        return self

    @property
    def _llm_type(self) -> str:
        return OFFLINE_PROVIDER

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = OFFLINE_PROVIDER
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[self._schema(t) for t in tools], **kwargs)

    def _schema(self, tool: Any) -> dict[str, Any]:
        """The tool's schema, converted once per (name, description, argument model): Deep
        Agents copies some tools at every call (grep, with the call's description), so a key by
        tool object would miss every time and keep every copy. The argument model is kept with
        the schema, so its id is never mistaken for another's."""
        model = getattr(tool, "args_schema", None)
        model = model if isinstance(model, type) else tool
        key = (getattr(tool, "name", None), getattr(tool, "description", None), id(model))
        known = self._schemas.get(key)
        if known is not None:
            return known[1]
        schema = convert_to_openai_tool(tool)
        self._schemas[key] = (model, schema)
        return schema

    # -- generation ---------------------------------------------------------------------
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._respond(messages, kwargs.get("tools"))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_seconds:
            await asyncio.sleep(self.latency_seconds)
        return self._respond(messages, kwargs.get("tools"))

    def _respond(self, messages: list[BaseMessage], tools: list[Any] | None) -> ChatResult:
        if not tools:  # a call without tools is the harness summarising history
            message = AIMessage(content="Summary: optimization playbook in progress (offline).")
        else:
            playbook = load_playbook(self.operator, self.target)
            driver = PlaybookDriver(playbook, self.seed, self._parsed)
            message = driver.next_message(messages)
        prompt_text = "".join(str(m.content) for m in messages)
        output_text = str(message.content) + json.dumps(message.tool_calls, default=str)
        message.usage_metadata = {
            "input_tokens": _estimate_tokens(prompt_text),
            "output_tokens": _estimate_tokens(output_text),
            "total_tokens": _estimate_tokens(prompt_text) + _estimate_tokens(output_text),
        }
        message.response_metadata = {
            "model_provider": OFFLINE_PROVIDER,
            "model_name": self.model_name,
            "usage_estimated": True,
        }
        return ChatResult(generations=[ChatGeneration(message=message)])


ADOPT_MARGIN = 0.005  # adopt another team's candidate only when clearly better (>0.5%)


class PlaybookDriver:
    """Turns (playbook, seed, visible history) into the next AI message."""

    def __init__(
        self,
        playbook: Playbook,
        seed: int,
        parsed_cache: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.playbook = playbook
        self.positions = playbook.positions(seed)  # None where the seed does not know the step
        self.route = [step for step in self.positions if step is not None]
        self.actions = route_actions(tuple(self.positions))
        self._parsed = parsed_cache

    def _index(self, kind: str, block: str) -> int:
        for index, action in enumerate(self.actions):
            if action.kind == kind and action.block == block:
                return index
        raise LookupError(f"{kind} in {block}")

    def next_message(self, messages: Sequence[BaseMessage]) -> AIMessage:
        history = History.read(messages, self._parsed)
        index = min(history.last_index + 1, len(self.actions) - 1)
        index = self._skip(index, history)
        return self._message(index, self.actions[index], history)

    # -- where to go next -------------------------------------------------------------------
    def _skip(self, index: int, history: History) -> int:
        """Jump over work that the evidence says is pointless, until nothing more is."""
        while True:
            after = self._skip_once(index, history)
            if after == index:
                return index
            index = after

    def _skip_once(self, index: int, history: History) -> int:
        action = self.actions[index]
        block = action.block
        position = block_position(block) if block.count(":") == 2 else None
        if position is not None and self._resolved(position, position, history, index):
            return self._after_polls(position)  # a wait or look at a gap: over once it is filled
        if block.startswith("adopt:"):
            after_block = self._index("decide", block) + 1  # the step's plan, or what follows
            if action.kind == "fetch" and self._adoption_target(index, history) is None:
                return after_block
            if action.kind in ("plan", "adopt_write", "full", "decide"):
                fetched = history.results.get(self._index("fetch", block), {})
                if "files" not in fetched:
                    return after_block
            return index
        if action.step is not None and action.kind == "plan" and self._blocked(index, history):
            return self._index("end_turn", block) + 1
        if action.step is None or action.kind not in ("probe", "full"):
            return index
        previous = "compile" if action.kind == "probe" else "probe"
        result = history.results.get(self._index(previous, block), {})
        ok = result.get("ok") if previous == "compile" else result.get("status") == "probe_passed"
        return index if ok else self._index("decide", block)

    def _blocked(self, plan_index: int, history: History) -> bool:
        """A known step that builds on a step this team does not know: it is played only when
        the team has kept another team's candidate since that gap (which may hold the missing
        idea); otherwise the team has nothing to build it on."""
        block = self.actions[plan_index].block
        position = next(
            n for n, step in enumerate(self.positions) if step is not None and step.id == block
        )
        gaps = [n for n in range(position) if self.positions[n] is None]
        if not gaps:
            return False
        if self._best(history, plan_index)[1].startswith("adopt:"):
            return False  # what it keeps is another team's: build on that
        return not self._resolved(gaps[-1], position, history, plan_index)

    def _resolved(self, first: int, last: int, history: History, before: int) -> bool:
        """Whether an adoption at a position in [first, last], decided before action `before`,
        was kept."""
        for index, action in enumerate(self.actions[:before]):
            if action.kind != "decide" or not action.block.startswith("adopt:"):
                continue
            position = block_position(action.block)
            if position is not None and first <= position <= last and self._kept(index, history):
                return True
        return False

    def _kept(self, decide: int, history: History) -> bool:
        """Whether the adoption decided at action `decide` beat what the team had."""
        block = self.actions[decide].block
        result = history.results.get(self._index("full", block), {})
        cycles = result.get("total_est_cycles")
        if result.get("status") != "measured" or not isinstance(cycles, int):
            return False
        best, _ = self.standing(history, decide)
        return best is None or cycles < best

    def _after_polls(self, position: int) -> int:
        """The first action after the waits and looks at the gap at `position`."""
        last = max(
            i
            for i, a in enumerate(self.actions)
            if a.block.startswith(("wait:", "adopt:"))
            and a.block.count(":") == 2
            and block_position(a.block) == position
        )
        return last + 1

    def _adoption_target(self, fetch_index: int, history: History) -> dict[str, Any] | None:
        """The best public candidate clearly better than ours and not tried before."""
        listing = history.calls.get((fetch_index - 1, 1), {})
        best, _ = self.standing(history, fetch_index)
        tried = {r.get("candidate_id") for i, r in history.results.items() if i < fetch_index}
        choices = [
            c
            for c in listing.get("candidates", [])
            if isinstance(c.get("total_est_cycles"), int) and c.get("candidate_id") not in tried
        ]
        if not choices:
            return None
        top = min(choices, key=lambda c: c["total_est_cycles"])
        if best is not None and top["total_est_cycles"] >= best * (1 - ADOPT_MARGIN):
            return None
        return top

    # -- bookkeeping: what is kept so far --------------------------------------------------
    def _files_of(self, block: str, history: History) -> dict[str, str]:
        if block == "baseline":
            return dict(self.playbook.baseline_files)
        if block.startswith("adopt:"):
            fetched = history.results.get(self._index("fetch", block), {})
            return dict(fetched.get("files", {}))
        return dict(self.playbook.steps[block].files)

    def standing(self, history: History, before: int) -> tuple[int | None, dict[str, str]]:
        """Best cycles and files among the evaluations decided before action `before`."""
        best, block = self._best(history, before)
        files = self._files_of(block, history) if best is not None else {}
        return best, files or dict(self.playbook.baseline_files)

    def _best(self, history: History, before: int) -> tuple[int | None, str]:
        """Best cycles among the evaluations decided before action `before`, and its block."""
        best: int | None = None
        block = "baseline"
        for index, action in enumerate(self.actions[:before]):
            if action.kind != "full":
                continue
            if action.block != "baseline" and self._index("decide", action.block) >= before:
                continue  # not decided yet
            result = history.results.get(index, {})
            cycles = result.get("total_est_cycles")
            if result.get("status") != "measured" or not isinstance(cycles, int):
                continue
            if best is None or cycles < best:
                best, block = cycles, action.block
        return best, block

    # -- messages ---------------------------------------------------------------------------
    def _message(self, index: int, action: Action, history: History) -> AIMessage:
        step = action.step
        calls: list[tuple[str, dict[str, Any]]]
        text = ""
        kind = action.kind
        if kind == "read_spec":
            text = "Reading the operator spec first."
            calls = [("read_file", {"file_path": "/spec.md"})]
        elif kind == "todos":
            text, calls = "Planning the work.", [("write_todos", {"todos": self._todos(None)})]
        elif kind == "list_cases":
            calls = [("list_local_cases", {})]
        elif kind == "inbox":
            text = "Checking the inbox and what other teams share."
            calls = [("read_inbox", {}), ("read_public_candidates", {})]
        elif kind == "fetch":
            target = self._adoption_target(index, history) or {}
            text = f"Another team's candidate looks better; fetching {target.get('candidate_id')}."
            calls = [("fetch_candidate_source", {"candidate_id": target.get("candidate_id")})]
        elif kind == "plan":
            calls = [("record_experiment_plan", self._plan(index, action, history))]
        elif kind == "adopt_write":
            files = self._files_of(action.block, history)
            text = "Adopting the fetched candidate into op_host/ and op_kernel/."
            calls = [
                ("write_file", {"file_path": f"/{rel}", "content": content})
                for rel, content in sorted(files.items())
            ]
        elif kind == "edit":
            assert step is not None
            text = f"Applying: {step.title}."
            calls = [
                ("write_file", {"file_path": f"/{rel}", "content": content})
                for rel, content in sorted(step.files.items())
            ]
        elif kind == "compile":
            calls = [("compile_kernel", {})]
        elif kind == "probe":
            assert step is not None
            calls = [("simulate_kernel", {"mode": "probe", "case_ids": list(step.probe_cases)})]
        elif kind == "full":
            calls = [("simulate_kernel", {"mode": "full"})]
        elif kind == "results":
            calls = [("read_simulation_results", {})]
        elif kind == "decide":
            text, calls = self._decide(index, action, history)
        elif kind == "end_turn":
            return AIMessage(content=self._turn_summary(index, step, history), id=call_id(index))
        elif kind == "wait":  # ends the turn as done: the team is woken by the next news
            best, _ = self.standing(history, index)
            shown = f"{best:,}" if best is not None else "not measured"
            why = (
                "I have no ideas of my own left"
                if action.block.startswith("wait:final")
                else "My next ideas build on a step I have not found"
            )
            text = (
                f"Best kept: {shown} est. cycles. {why}; waiting for the other teams' "
                f"candidates. {DONE_MARKER}"
            )
            return AIMessage(content=text, id=call_id(index))
        else:  # finish: a last look at the inbox (acknowledging feedback), then done
            return self._finish(index, history)
        tool_calls = [
            {"name": name, "args": args, "id": call_id(index, n), "type": "tool_call"}
            for n, (name, args) in enumerate(calls)
        ]
        return AIMessage(content=text, tool_calls=tool_calls, id=call_id(index))

    def _finish(self, index: int, history: History) -> AIMessage:
        """Each visit after the playbook is over reads the inbox once, then says done; a round
        number keeps every call id unique, so a team woken by new feedback acknowledges it."""
        rounds = history.finish_rounds
        if not history.finish_pending_result:
            calls = [
                {
                    "name": "read_inbox",
                    "args": {},
                    "id": call_id(index, rounds),
                    "type": "tool_call",
                }
            ]
            return AIMessage(
                content="Reading the inbox before stopping.",
                tool_calls=calls,
                id=f"{call_id(index, rounds)}m",
            )
        best, _ = self.standing(history, index)
        shown = f"{best:,}" if best is not None else "not measured"
        return AIMessage(
            content=f"Playbook complete. Best kept: {shown} est. cycles. {DONE_MARKER}",
            id=f"{call_id(index, rounds)}d",
        )

    def _todos(self, done_through: Step | None) -> list[dict[str, str]]:
        todos = [{"content": "Measure the baseline (all cases + cycles)", "status": "completed"}]
        reached = done_through is None
        for step in self.route:
            status = "completed" if not reached else "pending"
            if step is done_through:
                reached = True
                status = "completed"
            todos.append({"content": step.title, "status": status})
        if done_through is None:
            todos[0]["status"] = "in_progress"
        else:
            pending = [t for t in todos if t["status"] == "pending"]
            if pending:
                pending[0]["status"] = "in_progress"
        return todos

    def _plan(self, index: int, action: Action, history: History) -> dict[str, Any]:
        step = action.step
        if action.block == "baseline":
            return {
                "failure_evidence": "No measurement yet: the baseline has not been simulated.",
                "hypothesis": "The naive baseline is correct but slow; measure it first.",
                "change": "None: simulate the unchanged template.",
                "validation_criterion": "All 15 local cases pass and every perf case has cycles.",
                "case_ids": [],
            }
        best, _ = self.standing(history, index)
        evidence = (
            f"Current best kept candidate: {best:,} est. cycles over the perf cases."
            if best is not None
            else "No measured candidate yet."
        )
        if action.block.startswith("adopt:"):
            fetched = history.results.get(self._index("fetch", action.block), {})
            theirs = fetched.get("total_est_cycles")
            return {
                "failure_evidence": f"{evidence} A shared candidate claims {theirs:,} est. cycles.",
                "hypothesis": "Another team's frozen candidate is faster than ours on the "
                "same input pack; its receipt should reproduce here.",
                "change": f"Adopt candidate {fetched.get('candidate_id')} as is.",
                "validation_criterion": "All local cases pass and total est. cycles beat our "
                "best kept candidate.",
                "case_ids": [],
            }
        assert step is not None
        return {
            "failure_evidence": evidence,
            "hypothesis": step.hypothesis,
            "change": step.change,
            "validation_criterion": step.validation,
            "case_ids": list(step.probe_cases),
        }

    def _decide(self, index: int, action: Action, history: History) -> tuple[str, list[Any]]:
        step = action.step
        best, files = self.standing(history, index)
        full_index = self._index("full", action.block)
        result = history.results.get(full_index, {})
        cycles = result.get("total_est_cycles")
        kept = (
            result.get("status") == "measured"
            and isinstance(cycles, int)
            and (best is None or cycles < best)
        )
        adopting = action.block.startswith("adopt:")
        what = "the adopted candidate" if adopting or step is None else step.title
        todos = self._todos(None if adopting else step)
        before = f"{best:,}" if best is not None else "not measured"
        if kept:
            calls: list[Any] = [("write_todos", {"todos": todos})] if not adopting else []
            calls.append(
                (
                    "record_experience",
                    {
                        "condition": "the three performance cases (row, column, full reduction)",
                        "change": what,
                        "effect": f"{before} -> {cycles:,} est. cycles",
                        "receipt_id": result.get("receipt_id"),
                    },
                )
            )
            return f"Keeping {what}: {cycles:,} est. cycles (was {before}).", calls
        probe = history.results.get(self._index("probe", action.block), {}) if not adopting else {}
        why = result.get("status") or (f"probe {probe['status']}" if probe.get("status") else None)
        if result.get("status") == "measured":
            why = f"{cycles:,} est. cycles, not better"
        calls = [
            ("write_file", {"file_path": f"/{rel}", "content": content})
            for rel, content in sorted(files.items())
        ]
        if not adopting:
            calls.append(("write_todos", {"todos": todos}))
        reason = why or "not simulated"
        return f"Reverting {what} ({reason}); restoring the best kept source.", calls

    def _turn_summary(self, index: int, step: Step | None, history: History) -> str:
        best, _ = self.standing(history, index)
        shown = f"{best:,}" if best is not None else "not measured"
        if step is None:
            return f"Baseline measured: {shown} est. cycles. Next: optimizations."
        return f"Finished '{step.title}'. Best kept: {shown} est. cycles."
