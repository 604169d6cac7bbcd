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
request, not the history. A member (a subagent) starts a fresh thread at every `task`, so
its history cannot say which ids its team already used (plans and events key on them across
the team): every id of a member's response gets a random tag.

Offered tools. The model is offered only the tools it can use: never a tool the harness
excludes (`execute`: no shell here), and not the four tools that reach other teams while the
team is the run's only one (no other team and no outside agent has joined; asked at every
call, since teams and outside agents may join a running run). `read_inbox` stays: the Judger's
official feedback arrives there. A call of a tool the agent lacks, or of one the harness
excludes, is answered with the tools that are offered (LangChain's own answer would list
`execute`); a hidden peer tool still runs when called (nobody to reach: harmless, and the
offline playbook calls it anyway). A read_file result of Deep Agents that suggests `execute`
is rewritten to say what the model can do instead.

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
import re
import secrets
import time
from typing import Any

from deepagents.middleware.filesystem import READ_FILE_TRUNCATION_MSG
from langchain.agents.middleware.types import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from justkernel.a2a.board import LabBoard
from justkernel.agents.middleware.shared import (
    ModelHandler,
    Place,
    Seat,
    ToolHandler,
    ToolResultT,
    clip,
)
from justkernel.agents.provider_compat import ARGUMENTS_KEY
from justkernel.core.events.agents import ToolCall, ToolResult

SCHEMA_CHARS = 1500
TEAMS_SECONDS = 2.0  # how long the list of a run's teams is taken as known
EXCLUDED_TOOLS = frozenset({"execute"})  # the harness profile's: no shell in a workspace
PEER_TOOLS = frozenset(
    {"send_message", "read_public_candidates", "fetch_candidate_source", "record_experience"}
)
READ_MORE = (
    "[Output was truncated due to size limits: the file has very long lines. Read fewer "
    "lines at a time with read_file(offset=..., limit=...), or grep for what you need.]"
)
# Deep Agents' READ_FILE_TRUNCATION_MSG, whatever path it names: it tells the model to run
# `execute`, which this harness never offers
_EXECUTE_HINT = re.compile(
    re.escape(READ_FILE_TRUNCATION_MSG.strip().split("{file_path}")[0][:60]) + r".*?\]",
    re.S,
)


def without_execute(text: str) -> str:
    """A read_file result with Deep Agents' hint to run `execute` replaced by one the team
    can follow."""
    return _EXECUTE_HINT.sub(lambda _m: READ_MORE, text)


def used_ids(messages: list[BaseMessage]) -> set[str]:
    """Every tool call id the thread holds: asked for (valid or not) and answered."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            ids |= {c["id"] for c in (*message.tool_calls, *message.invalid_tool_calls) if c["id"]}
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids


def with_streamed_malformed(message: AIMessage) -> AIMessage:
    """`message` with every call whose streamed arguments (`provider_compat`: the merge parses
    them leniently, text that is not JSON becomes `{}`) are not a JSON object moved to
    `invalid_tool_calls`, with the text as it was sent."""
    raw = message.response_metadata.get(ARGUMENTS_KEY)
    if not isinstance(raw, dict):
        return message
    valid, invalid = [], list(message.invalid_tool_calls)
    for call in message.tool_calls:
        text = raw.get(call["id"])
        if isinstance(text, str) and text.strip() and not _is_object(text):
            invalid.append(
                {
                    "type": "invalid_tool_call",
                    "id": call["id"],
                    "name": call["name"],
                    "args": text,
                    "error": parse_problem(text),
                }
            )
        else:
            valid.append(call)
    if len(valid) == len(message.tool_calls):
        return message
    return message.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _fresh(call_id: str, used: set[str], tag: str) -> str:
    candidate, n = f"{call_id}_{tag}", 1
    while candidate in used:
        n += 1
        candidate = f"{call_id}_{tag}.{n}"
    return candidate


def unique_call_ids(
    message: AIMessage, used: set[str], tag: str, *, every: bool = False
) -> AIMessage:
    """`message` with every call id that is in `used` (or repeats in it; with `every`, every
    id) replaced by one tagged `tag`, and the replacements added to `used`; the message itself
    when nothing had to change."""
    renamed: dict[int, str] = {}
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    for index, call in enumerate(calls):
        call_id = call["id"]
        if call_id and (every or call_id in used):
            renamed[index] = _fresh(call_id, used, tag)
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
    given = tool.tool_call_schema  # a JSON schema already for a tool built from one (MCP)
    schema = given if isinstance(given, dict) else given.model_json_schema()
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


def _name(tool: Any) -> str | None:
    return tool.get("name") if isinstance(tool, dict) else getattr(tool, "name", None)


class ToolCallsMiddleware(AgentMiddleware):
    def __init__(self, seat: Seat | Place, board: LabBoard | None = None) -> None:
        """`board` tells whether the team has company (None: the peer tools are never
        offered, as no board tool exists)."""
        super().__init__()
        self.seat = seat
        self.board = board
        # per team (one instance serves every team of a shared graph): the argument schema of
        # each tool last offered to it, and every tool its agent has, offered or not
        self._offered: dict[str, dict[str, str]] = {}
        self._registered: dict[str, frozenset[str]] = {}
        # each tool's argument schema, computed once per (name, argument model): most tools are
        # the same objects at every call, and the ones Deep Agents copies per call (grep, with
        # a description for the call) keep their argument model; the model is kept with it, so
        # its id stays its own
        self._schema_of: dict[tuple[str, int], tuple[object, str]] = {}
        self._teams_of: dict[str, tuple[float, list[str]]] = {}

    async def _hidden(self, seat: Seat) -> frozenset[str]:
        if self.board is None:
            return EXCLUDED_TOOLS
        alone = all(t == seat.team_id for t in await self._teams(seat.ctx.run_id))
        return EXCLUDED_TOOLS | PEER_TOOLS if alone else EXCLUDED_TOOLS

    async def _teams(self, run_id: str) -> list[str]:
        """The run's teams, read again at most every TEAMS_SECONDS: every model call asks, and
        a team that joins is offered the peer tools a moment later, not at once."""
        now = time.monotonic()
        known = self._teams_of.get(run_id)
        if known is None or now - known[0] > TEAMS_SECONDS:
            _policies, teams = await self.board.policies(run_id)  # type: ignore[union-attr]
            known = self._teams_of[run_id] = (now, teams)
        return known[1]

    def _schemas(self, offered: list[Any]) -> dict[str, str]:
        schemas: dict[str, str] = {}
        for tool in offered:
            if not isinstance(tool, BaseTool):
                continue
            model = tool.args_schema if isinstance(tool.args_schema, type) else tool
            key = (tool.name, id(model))
            known = self._schema_of.get(key)
            if known is None:
                known = self._schema_of[key] = (model, _schema(tool))
            schemas[tool.name] = known[1]
        return schemas

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        seat = self.seat.at(request.runtime)
        hidden = await self._hidden(seat)
        self._registered[seat.team_id] = frozenset(n for t in request.tools if (n := _name(t)))
        offered = [t for t in request.tools if _name(t) not in hidden]
        if len(offered) != len(request.tools):
            request = request.override(tools=offered)
        self._offered[seat.team_id] = self._schemas(offered)
        response = await handler(request)
        history = request.state.get("messages", [])
        used = used_ids(history)
        member = self.seat.member
        if member is None:
            tag, every = f"r{sum(1 for m in history if isinstance(m, AIMessage)) + 1}", False
        else:  # a member's thread starts afresh at each task: its history cannot tell
            tag, every = f"{member}{secrets.token_hex(3)}", True
        response.result = [
            unique_call_ids(with_streamed_malformed(m), used, tag, every=every)
            if isinstance(m, AIMessage)
            else m
            for m in response.result
        ]
        return response

    def offered_to(self, team_id: str) -> dict[str, str]:
        """The argument schema of each tool last offered to the team, by name."""
        return self._offered.get(team_id, {})

    async def awrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResultT:
        call = request.tool_call
        name = call["name"]
        # before this process's first model call (a turn resumed at a tool call) nothing
        # was offered yet: the call stands. A peer tool hidden from a lone team still runs
        # when called (it is harmless: nobody to reach); a tool the agent lacks, or one the
        # harness excludes, is refused naming the tools that are offered
        team_id = self.seat.at(request.runtime).team_id
        schemas = self._offered.get(team_id, {})
        unknown = name in EXCLUDED_TOOLS or name not in self._registered.get(team_id, ())
        if schemas and name not in schemas and unknown:
            known = ", ".join(sorted(schemas))
            return ToolMessage(
                content=f"error: {name} is not one of your tools; nothing was run. Your "
                f"tools are: {known}.",
                name=name,
                tool_call_id=call["id"],
                status="error",
            )
        result = await handler(request)
        if name == "read_file" and isinstance(result, ToolMessage):
            text = result.content
            if isinstance(text, str) and "execute(" in text:
                result = result.model_copy(update={"content": without_execute(text)})
        return result


class MalformedCallsMiddleware(AgentMiddleware):
    """Answers each tool call whose arguments could not be parsed, naming why and the tool's
    schema, with its `tool.call` / `tool.result` events after the response's: the model sees
    its mistake at once. It sits outside the events (and the budget), so the response is on
    record first; it answers around the model call rather than in an `after_model` hook (a
    hook is a graph node, and each node a checkpoint write per agent step). When nothing else
    runs the model is asked again in this turn."""

    def __init__(self, calls: ToolCallsMiddleware) -> None:
        super().__init__()
        self.calls = calls

    async def awrap_model_call(
        self, request: ModelRequest, handler: ModelHandler
    ) -> ModelResponse | ExtendedModelResponse:
        response = await handler(request)
        last = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        if last is None or not last.invalid_tool_calls:
            return response
        seat = self.calls.seat.at(request.runtime)
        answers: list[BaseMessage] = []
        for call in last.invalid_tool_calls:
            call_id, name, raw = call.get("id"), call.get("name"), call.get("args")
            if not call_id:
                continue
            text = malformed_answer(name, raw, self.calls.offered_to(seat.team_id))
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
            return response
        response.result = [*response.result, *answers]
        if last.tool_calls:
            return response
        # nothing else runs: ask the model again, in this turn
        return ExtendedModelResponse(
            model_response=response, command=Command(update={"jump_to": "model"})
        )
