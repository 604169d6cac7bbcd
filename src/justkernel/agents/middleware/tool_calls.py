"""Tool calls as the lab can trust them: ids unique in the thread, malformed calls answered.

Ids. Every piece of idempotence in the lab keys on the tool call id: a recorded plan
(`ExperimentBook.record_plan`), the plan a full simulation closed, board posts and deliveries,
and the events (`once_per=`). Some OpenAI-compatible servers number the calls of each response
from `call_0`, so the second experiment's plan would come back as the first (closed) one and
its events would be dropped as duplicates. So each response's ids are made unique in the thread
before anything else sees them: an id the thread's state already holds (or that repeats within
the response) gets a suffix. Only the fresh response is rewritten, before it reaches the state,
so an id that reached a checkpoint is never changed (a resumed turn re-runs its calls with the
ids they had). The state's messages are read, not the request's: summarization shortens the
request, not the history.

Malformed calls. Arguments that are not a JSON object reach LangChain as
`AIMessage.invalid_tool_calls`: no tool runs, the turn simply ends, and the next turn gets
LangChain's generic "could not be executed". Here such a call gets its `tool.call` and an error
`tool.result` event, and a ToolMessage that says why (the parse error) and what to do (the
tool's argument schema); when the response held no valid call the model is asked again at once
(`jump_to="model"`), in the same turn. Each retry is a model call like any other: the budget,
the watchdog and the recursion limit bound them.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from justkernel.agents.middleware.shared import ModelHandler, Place, Seat, clip
from justkernel.core.events.agents import ToolCall, ToolResult

SCHEMA_CHARS = 1500


def used_ids(messages: list[BaseMessage]) -> set[str]:
    """Every tool call id the thread holds: asked for (valid or not) and answered."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            ids |= {c["id"] for c in (*message.tool_calls, *message.invalid_tool_calls) if c["id"]}
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids


def _fresh(call_id: str, used: set[str], turn: int) -> str:
    candidate, n = f"{call_id}_r{turn}", 1
    while candidate in used:
        n += 1
        candidate = f"{call_id}_r{turn}.{n}"
    return candidate


def unique_call_ids(message: AIMessage, used: set[str], turn: int) -> AIMessage:
    """`message` with every call id that is in `used` (or repeats in it) replaced, and the
    replacements added to `used`; the message itself when nothing had to change."""
    renamed: dict[int, str] = {}
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    for index, call in enumerate(calls):
        call_id = call["id"]
        if call_id and call_id in used:
            renamed[index] = _fresh(call_id, used, turn)
            call_id = renamed[index]
        if call_id:
            used.add(call_id)
    if not renamed:
        return message
    fixed = [{**c, "id": renamed.get(i, c["id"])} for i, c in enumerate(calls)]
    split = len(message.tool_calls)
    return message.model_copy(
        update={"tool_calls": fixed[:split], "invalid_tool_calls": fixed[split:]}
    )


def _schema(tool: BaseTool) -> str:
    schema = tool.tool_call_schema.model_json_schema()
    shown = {"properties": schema.get("properties", {}), "required": schema.get("required", [])}
    return clip(json.dumps(shown, ensure_ascii=False), SCHEMA_CHARS)


def parse_problem(raw: str | None) -> str:
    """Why raw arguments are not usable: not JSON (with the decoder's message), or not an
    object."""
    try:
        value = json.loads(raw or "")
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc})"
    return f"JSON, but a {type(value).__name__}, not an object"


def malformed_answer(name: str | None, raw: str | None, schemas: dict[str, str]) -> str:
    """What a malformed call is answered: why, and what to send instead."""
    problem = parse_problem(raw)
    if name not in schemas:
        known = ", ".join(sorted(schemas))
        return (
            f"error: no tool named {name!r} (and its arguments are {problem}); nothing was "
            f"run. The tools are: {known}."
        )
    return (
        f"error: the arguments of this {name} call are {problem}; nothing was run. Call "
        f"{name} again with arguments that are a JSON object matching its schema: "
        f"{schemas[name]}"
    )


class ToolCallsMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place) -> None:
        super().__init__()
        self.seat = seat
        self._schemas: dict[str, str] = {}  # the argument schema of each tool last offered

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        self._schemas = {t.name: _schema(t) for t in request.tools if isinstance(t, BaseTool)}
        response = await handler(request)
        history = request.state.get("messages", [])
        used = used_ids(history)
        turn = sum(1 for m in history if isinstance(m, AIMessage)) + 1
        response.result = [
            unique_call_ids(m, used, turn) if isinstance(m, AIMessage) else m
            for m in response.result
        ]
        return response

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = state["messages"][-1] if state["messages"] else None
        if not isinstance(last, AIMessage) or not last.invalid_tool_calls:
            return None
        answers: list[ToolMessage] = []
        for call in last.invalid_tool_calls:
            call_id, name, raw = call.get("id"), call.get("name"), call.get("args")
            if not call_id:
                continue
            text = malformed_answer(name, raw, self._schemas)
            seat = self.seat.at(runtime)
            once = seat.once(call_id)
            who = seat.member
            args = clip(raw or "", 4000)
            await seat.ctx.emit(
                ToolCall(id=call_id, name=name, member=who, args=args), once_per=once
            )
            await seat.ctx.emit(
                ToolResult(
                    id=call_id, name=name, member=who, seconds=0, error=True, content=clip(text)
                ),
                once_per=once,
            )
            answers.append(
                ToolMessage(
                    content=text, name=name or "unknown", tool_call_id=call_id, status="error"
                )
            )
        if not answers:
            return None
        update: dict[str, Any] = {"messages": answers}
        if not last.tool_calls:  # nothing else runs: ask the model again, in this turn
            update["jump_to"] = "model"
        return update
