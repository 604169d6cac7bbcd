"""The team observer: one middleware that turns every model call and tool call into events,
and applies the lab's limits where they belong (model-call concurrency, budgets, watchdog).

It sits in the Deep Agents middleware stack, so it sees exactly what the harness does: the
messages sent, the provider-reported usage, tool requests and their actual returns.

A member (a Deep Agents subagent) runs its own middleware stack: the team's is not inherited.
So each member gets an observer of its own (`member_observer`), which governs and records its
calls like the team's, with the member's preset and provider and a `member` field in the events;
pauses, the workspace tree and the provider of a failed call are kept on the team's observer
(its `lead`), which the scheduler reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, hook_config
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import ValidationError

from justkernel.agents.board_tools import BoardAccess
from justkernel.agents.errors import classify_error
from justkernel.agents.tools import TeamContext
from justkernel.agents.usage import cost_usd, usage_from_message
from justkernel.core.events.agents import (
    ModelError,
    ModelResponse,
    SourceChanged,
    TodosUpdated,
    ToolCall,
    ToolCallRef,
    ToolResult,
)
from justkernel.core.events.runs import WatchdogNudge
from justkernel.scheduler.budget import BudgetExceeded, BudgetGovernor
from justkernel.scheduler.limits import ModelCallLimiter
from justkernel.scheduler.watchdog import Watchdog
from justkernel.settings.models import ModelPreset
from justkernel.settings.redaction import scrub

TEXT_LIMIT = 2000
ACK_SCAN = 40  # recent messages searched for inbox results to acknowledge
DEFAULT_OUTPUT_ESTIMATE = 2048  # tokens reserved for a reply when the preset sets no limit
SOURCE_TOOLS = {"write_file", "edit_file"}
NUDGE = (
    "Watchdog: no progress for a while (no source change and no new experiment). "
    "Record an experiment plan and change the kernel, or simulate, instead of reading more."
)


class TeamPaused(RuntimeError):
    """The turn stopped because the team was paused (watchdog, budget or provider)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = scrub(text)
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return str(content)


def _tool_message(result: Any) -> ToolMessage | None:
    """The ToolMessage of a tool's return (tools such as write_todos return a Command)."""
    if isinstance(result, ToolMessage):
        return result
    update = getattr(result, "update", None)
    if isinstance(update, dict):
        for message in update.get("messages", []):
            if isinstance(message, ToolMessage):
                return message
    return None


def _calls_brief(message: AIMessage | None) -> list[dict[str, Any]]:
    calls = message.tool_calls if message is not None else []
    return [
        {"id": c.get("id"), "name": c["name"], "args": _clip(json.dumps(c["args"]), 400)}
        for c in calls
    ]


@dataclass
class Governance:
    """The run-wide limits shared by every team's observer."""

    limiter: ModelCallLimiter
    budget: BudgetGovernor
    watchdog: Watchdog
    on_pause: Callable[[str, str], Awaitable[None]]  # (team, reason)
    seen_input_tokens: dict[str, int] = field(default_factory=dict)  # last prompt per provider


def inbox_reads(messages: Any) -> set[str]:
    """The read_inbox calls whose result the agent's history holds. A call that failed or
    never finished has none, or an error in its place (a dangling call is answered "did not
    complete" when the agent is invoked again): what it delivered was never seen."""
    return {
        m.tool_call_id
        for m in messages
        if isinstance(m, ToolMessage) and m.name == "read_inbox" and m.status != "error"
    }


class TeamObserver(AgentMiddleware):
    def __init__(
        self,
        ctx: TeamContext,
        preset: ModelPreset,
        governance: Governance,
        provider: str,
        *,
        board: BoardAccess | None = None,
        member: str | None = None,
        lead: TeamObserver | None = None,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        self.board = board
        self.preset = preset
        self.gov = governance
        self.provider = provider
        self.member = member  # None: the team's own agent
        self.lead: TeamObserver = lead or self  # the team's observer, which the scheduler reads
        self.pause_reason: str | None = None
        self.failed_provider: str | None = None  # the provider of the last failed model call
        self._tree = ctx.workspace.tree_sha256() if lead is None else ""
        self._last_input_tokens = 0

    def member_observer(self, member: str, preset: ModelPreset, provider: str) -> TeamObserver:
        """The observer of one member's agent, on the member's own preset and provider."""
        return TeamObserver(
            self.ctx, preset, self.gov, provider, board=self.board, member=member, lead=self
        )

    def _once(self, call_id: str | None) -> str | None:
        """The dedup key of a tool call's events: a member's ids come from another
        conversation (maybe another provider), so they are kept apart from the team's."""
        if call_id is None or self.member is None:
            return call_id
        return f"{self.member}:{call_id}"

    @property
    def name(self) -> str:
        return "JustKernelTeamObserver"

    # -- before each model call: watchdog -----------------------------------------------
    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        await self._ack_inbox(state)
        if self.lead.pause_reason is not None:  # paused while a member worked: stop here too
            return {"jump_to": "end"}
        verdict = self.gov.watchdog.verdict(self.ctx.team_id)
        if verdict == "pause":
            await self._pause("no progress: paused by the stall watchdog")
            return {"jump_to": "end"}
        if verdict == "nudge":
            self.gov.watchdog.nudged(self.ctx.team_id)
            await self.ctx.emit(WatchdogNudge(message=NUDGE))
            return {"messages": [HumanMessage(content=NUDGE)]}
        return None

    async def _ack_inbox(self, state: Any) -> None:
        """Acknowledge inbox deliveries whose tool result is now in the agent's history: the
        history is checkpointed before the next model call, so nothing acked can be lost."""
        if self.board is None:
            return
        messages = state.get("messages", []) if isinstance(state, dict) else []
        calls = sorted(inbox_reads(messages[-ACK_SCAN:]))
        if calls:
            await self.board.board.ack(self.ctx.run_id, self.ctx.team_id, calls)

    async def _pause(self, reason: str) -> None:
        self.lead.pause_reason = reason
        await self.gov.on_pause(self.ctx.team_id, reason)

    # -- model calls ----------------------------------------------------------------------
    def _estimate_input_tokens(self, request: Any) -> int:
        """An upper-leaning guess of the prompt size, so budget reservations rarely fall short:
        the larger of a characters/4 count (messages, system prompt, tool schemas) and the
        last prompt the provider reported for this team or, before that, for its provider
        (a conversation only grows)."""
        chars = sum(len(_content_text(m.content)) for m in request.messages)
        if request.system_message is not None:
            chars += len(_content_text(request.system_message.content))
        chars += len(json.dumps([getattr(t, "name", str(t)) for t in request.tools]))
        observed = self._last_input_tokens or self.gov.seen_input_tokens.get(self.provider, 0)
        return max(chars // 4 + 1, observed)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        est_in = self._estimate_input_tokens(request)
        est_out = self.preset.max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        try:
            reservation = self.gov.budget.reserve(
                self.ctx.team_id,
                self.provider,
                est_in + est_out,
                cost_usd(self.preset, est_in, est_out),
            )
        except BudgetExceeded as exc:
            await self._pause(f"budget: {exc.reason}")
            raise TeamPaused(exc.reason) from exc
        started = time.monotonic()
        try:
            async with self.gov.limiter.slot(self.provider):
                response = await handler(request)
        except Exception as exc:
            self.gov.budget.settle(reservation, None, None)
            if isinstance(exc, TeamPaused):
                raise
            self.lead.failed_provider = self.provider
            error = classify_error(exc)
            await self.ctx.emit(
                ModelError(
                    provider=self.provider,
                    member=self.member,
                    kind=error.kind,
                    message=error.message,
                )
            )
            raise
        message = next((m for m in response.result if isinstance(m, AIMessage)), None)
        usage = usage_from_message(self.preset, message) if message is not None else None
        if usage is not None:
            self._last_input_tokens = usage.input_tokens
            self.gov.seen_input_tokens[self.provider] = usage.input_tokens
        self.gov.budget.settle(
            reservation,
            usage.total if usage else None,
            usage.cost_usd if usage else None,
        )
        await self.ctx.emit(
            ModelResponse(
                provider=self.provider,
                model=self.preset.model,
                preset=self.preset.name,
                member=self.member,
                offline=self.preset.provider == "offline",
                seconds=round(time.monotonic() - started, 4),
                usage=usage.to_dict() if usage else None,
                usage_estimated=bool(
                    message is not None and message.response_metadata.get("usage_estimated")
                ),
                text=_clip(_content_text(message.content)) if message is not None else "",
                tool_calls=[
                    ToolCallRef(
                        id=c.get("id"), name=c["name"], args=_clip(json.dumps(c["args"]), 400)
                    )
                    for c in (message.tool_calls if message is not None else [])
                ],
            )
        )
        self.gov.watchdog.on_response(self.ctx.team_id)
        return response

    # -- tool calls -----------------------------------------------------------------------
    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        name = call["name"]
        call_id = call.get("id")
        await self.ctx.emit(
            ToolCall(
                id=call_id,
                name=name,
                member=self.member,
                args=_clip(json.dumps(call["args"]), 4000),
            ),
            once_per=self._once(call_id),
        )
        started = time.monotonic()
        result = await handler(request)
        message = _tool_message(result)
        text = _content_text(message.content) if message is not None else str(result)
        error = message is not None and message.status == "error"
        await self.ctx.emit(
            ToolResult(
                id=call.get("id"),
                name=name,
                member=self.member,
                seconds=round(time.monotonic() - started, 4),
                error=error,
                content=_clip(text),
            ),
            once_per=self._once(call_id),
        )
        if name == "write_todos":
            try:
                todos = TodosUpdated(todos=call["args"].get("todos", []))
            except ValidationError:  # a list the tool refused as well: nothing was updated
                todos = None
            if todos is not None:
                await self.ctx.emit(todos, once_per=self._once(call_id))
        if name in SOURCE_TOOLS:
            await self._check_source_change()
        return result

    async def _check_source_change(self) -> None:
        """Members share the team's workspace, so the last tree seen is the lead's."""
        tree = self.ctx.workspace.tree_sha256()
        if tree == self.lead._tree:
            return
        head = self.ctx.workspace.head()
        diff = self.ctx.workspace.diff_from(head)
        self.lead._tree = tree
        await self.ctx.emit(
            SourceChanged(tree_sha256=tree, base_commit=head, diff=_clip(diff, 20000))
        )
        self.gov.watchdog.on_progress(self.ctx.team_id)
