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
from pydantic import ConfigDict, Field

from justkernel.agents.playbook import (
    DONE_MARKER,
    Action,
    History,
    Playbook,
    Step,
    call_id,
    load_playbook,
    route_actions,
)

OFFLINE_PROVIDER = "justkernel-offline"


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OfflinePlaybookModel(BaseChatModel):
    """Plays `playbook` along the route chosen by `seed`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    seed: int = 0
    operator: str = "confusion_mul_grad"
    latency_seconds: float = Field(default=0.0, ge=0)
    model_name: str = "offline-playbook"

    @property
    def _llm_type(self) -> str:
        return OFFLINE_PROVIDER

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = OFFLINE_PROVIDER
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

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
            playbook = load_playbook(self.operator)
            message = PlaybookDriver(playbook, self.seed).next_message(messages)
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


class PlaybookDriver:
    """Turns (playbook, seed, visible history) into the next AI message."""

    def __init__(self, playbook: Playbook, seed: int) -> None:
        self.playbook = playbook
        self.route = playbook.route(seed)
        self.actions = route_actions(self.route)

    def _index_of(self, kind: str, step: Step | None) -> int:
        for index, action in enumerate(self.actions):
            if action.kind == kind and action.step is step:
                return index
        raise LookupError(kind)

    def next_message(self, messages: Sequence[BaseMessage]) -> AIMessage:
        history = History.read(messages)
        index = min(history.last_index + 1, len(self.actions) - 1)
        index = self._skip_failed(index, history)
        return self._message(index, self.actions[index], history)

    def _skip_failed(self, index: int, history: History) -> int:
        """After a failed compile or probe, go straight to the decision (which reverts)."""
        action = self.actions[index]
        if action.step is None or action.kind not in ("probe", "full"):
            return index
        previous = "compile" if action.kind == "probe" else "probe"
        result = history.results.get(self._index_of(previous, action.step), {})
        ok = result.get("ok") if previous == "compile" else result.get("status") == "probe_passed"
        return index if ok else self._index_of("decide", action.step)

    # -- bookkeeping: what is kept so far ------------------------------------------------
    def _full_result(self, step: Step | None, history: History) -> dict[str, Any]:
        return history.results.get(self._index_of("full", step), {})

    def standing(self, history: History, upto: Step | None) -> tuple[int | None, dict[str, str]]:
        """Best cycles and files among the baseline and steps decided before `upto`."""
        base = self._full_result(None, history)
        best = base.get("total_est_cycles") if base.get("status") == "measured" else None
        files = dict(self.playbook.baseline_files)
        for step in self.route:
            if step is upto:
                break
            cycles = self._kept_cycles(step, best, history)
            if cycles is not None:
                best, files = cycles, dict(step.files)
        return best, files

    def _kept_cycles(self, step: Step, best: int | None, history: History) -> int | None:
        result = self._full_result(step, history)
        cycles = result.get("total_est_cycles")
        if result.get("status") != "measured" or not isinstance(cycles, int):
            return None
        return cycles if best is None or cycles < best else None

    # -- messages ---------------------------------------------------------------------
    def _message(self, index: int, action: Action, history: History) -> AIMessage:
        step = action.step
        calls: list[tuple[str, dict[str, Any]]]
        text = ""
        if action.kind == "read_spec":
            text, calls = (
                "Reading the operator spec first.",
                [("read_file", {"file_path": "/spec.md"})],
            )
        elif action.kind == "todos":
            text, calls = "Planning the work.", [("write_todos", {"todos": self._todos(history)})]
        elif action.kind == "list_cases":
            calls = [("list_local_cases", {})]
        elif action.kind == "plan":
            calls = [("record_experiment_plan", self._plan(step, history))]
        elif action.kind == "edit":
            assert step is not None
            text = f"Applying: {step.title}."
            calls = [
                ("write_file", {"file_path": f"/{rel}", "content": content})
                for rel, content in sorted(step.files.items())
            ]
        elif action.kind == "compile":
            calls = [("compile_kernel", {})]
        elif action.kind == "probe":
            assert step is not None
            calls = [("simulate_kernel", {"mode": "probe", "case_ids": list(step.probe_cases)})]
        elif action.kind == "full":
            calls = [("simulate_kernel", {"mode": "full"})]
        elif action.kind == "results":
            calls = [("read_simulation_results", {})]
        elif action.kind == "decide":
            text, calls = self._decide(step, history)
        elif action.kind == "end_turn":
            return AIMessage(content=self._turn_summary(step, history), id=call_id(index))
        else:  # finish
            best, _ = self.standing(history, None)
            shown = f"{best:,}" if best is not None else "not measured"
            return AIMessage(
                content=f"Playbook complete. Best kept: {shown} est. cycles. {DONE_MARKER}",
                id=call_id(index),
            )
        tool_calls = [
            {"name": name, "args": args, "id": call_id(index, n), "type": "tool_call"}
            for n, (name, args) in enumerate(calls)
        ]
        return AIMessage(content=text, tool_calls=tool_calls, id=call_id(index))

    def _todos(self, history: History, done_through: Step | None = None) -> list[dict[str, str]]:
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

    def _plan(self, step: Step | None, history: History) -> dict[str, Any]:
        if step is None:
            return {
                "failure_evidence": "No measurement yet: the baseline has not been simulated.",
                "hypothesis": "The naive baseline is correct but slow; measure it first.",
                "change": "None: simulate the unchanged template.",
                "validation_criterion": "All 15 local cases pass and every perf case has cycles.",
                "case_ids": [],
            }
        best, _ = self.standing(history, step)
        evidence = (
            f"Current best kept candidate: {best:,} est. cycles over the perf cases."
            if best is not None
            else "No measured candidate yet."
        )
        return {
            "failure_evidence": evidence,
            "hypothesis": step.hypothesis,
            "change": step.change,
            "validation_criterion": step.validation,
            "case_ids": list(step.probe_cases),
        }

    def _decide(self, step: Step | None, history: History) -> tuple[str, list[Any]]:
        assert step is not None
        best, files = self.standing(history, step)
        kept = self._kept_cycles(step, best, history)
        todos = self._todos(history, done_through=step)
        if kept is not None:
            before = f"{best:,}" if best is not None else "not measured"
            return (
                f"Keeping {step.title}: {kept:,} est. cycles (was {before}).",
                [("write_todos", {"todos": todos})],
            )
        result = self._full_result(step, history)
        probe = history.results.get(self._index_of("probe", step), {})
        compiled = history.results.get(self._index_of("compile", step), {})
        why = (
            result.get("status")
            or (f"probe {probe['status']}" if probe.get("status") else None)
            or (f"compile {compiled.get('status')}" if compiled else None)
            or "not simulated"
        )
        if result.get("status") == "measured":
            why = f"{result.get('total_est_cycles'):,} est. cycles, not better"
        calls: list[Any] = [
            ("write_file", {"file_path": f"/{rel}", "content": content})
            for rel, content in sorted(files.items())
        ]
        calls.append(("write_todos", {"todos": todos}))
        return f"Reverting {step.title} ({why}); restoring the best kept source.", calls

    def _turn_summary(self, step: Step | None, history: History) -> str:
        best, _ = self.standing(history, None)
        shown = f"{best:,}" if best is not None else "not measured"
        if step is None:
            return f"Baseline measured: {shown} est. cycles. Next: optimizations."
        return f"Finished '{step.title}'. Best kept: {shown} est. cycles."
