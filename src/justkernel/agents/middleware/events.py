"""The team's events: every model call and tool call as the harness really made it.

Model calls give `model.response` (the provider-reported usage, the reply and the calls it
asked for) or `model.error`, each with its `purpose`: `turn` for the agent's own steps,
`summary` for the calls that condense its history (`agents.summarization` runs this same
middleware around them); tool calls give `tool.call` and `tool.result`, plus `todos.updated`
for the todo list and `source.changed` when a file tool changed the workspace's tree. A source
change is progress too, reported through `TeamContext.progress` (the watchdog's way in).
Texts are clipped and scrubbed of secrets; a tool call's events are logged once per call id,
so a step redone after a crash does not log twice.
"""

from __future__ import annotations

import json
import time

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import ValidationError

from justkernel.agents.errors import ModelCallFailed, classify_error
from justkernel.agents.middleware.shared import (
    ModelHandler,
    Place,
    Seat,
    TeamPaused,
    ToolHandler,
    ToolResultT,
    clip,
    content_text,
)
from justkernel.agents.usage import usage_from_message
from justkernel.core.events.agents import (
    ModelError,
    SourceChanged,
    TodosUpdated,
    ToolCall,
    ToolCallRef,
    ToolResult,
)
from justkernel.core.events.agents import ModelResponse as ModelResponseEvent
from justkernel.governance.limits import ProviderPaused
from justkernel.teams.workspace import TeamWorkspace

SOURCE_TOOLS = {"write_file", "edit_file"}


class SourceTracker:
    """The last tree of a team's workspace the events told of. Members share the team's
    workspace, so the team's agent and its members share one tracker."""

    def __init__(self, workspace: TeamWorkspace) -> None:
        self.workspace = workspace
        self.tree = workspace.tree_sha256()

    def change(self) -> SourceChanged | None:
        """The change since the last one told of, or None when the tree is the same."""
        tree = self.workspace.tree_sha256()
        if tree == self.tree:
            return None
        head = self.workspace.head()
        diff = self.workspace.diff_from(head)
        self.tree = tree
        return SourceChanged(tree_sha256=tree, base_commit=head, diff=clip(diff, 20000))


def tool_message(result: ToolResultT) -> ToolMessage | None:
    """The ToolMessage of a tool's return (tools such as write_todos return a Command)."""
    if isinstance(result, ToolMessage):
        return result
    update = getattr(result, "update", None)
    if isinstance(update, dict):
        for message in update.get("messages", []):
            if isinstance(message, ToolMessage):
                return message
    return None


class EventsMiddleware(AgentMiddleware):
    """`source` None: the tracker of the team each call is bound to (a shared graph)."""

    def __init__(
        self, seat: Seat | Place, source: SourceTracker | None, *, purpose: str = "turn"
    ) -> None:
        super().__init__()
        self.seat = seat
        self.source = source
        self.purpose = purpose

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        seat = self.seat.at(request.runtime)
        started = time.monotonic()  # the wait for a model-call slot counts
        failed: Exception | None = None
        try:
            response = await handler(request)
        except TeamPaused:  # a pause is not the model's error
            raise
        except ProviderPaused as exc:  # ours: its words are safe
            failed = exc
        except Exception as exc:
            failed = ModelCallFailed.of(exc, seat.provider)
        if failed is not None:
            seat.signals.failed_provider = seat.provider
            seat.signals.failed_connection = seat.preset.name
            error = classify_error(failed)
            await seat.ctx.emit(
                ModelError(
                    purpose=self.purpose,
                    provider=seat.provider,
                    member=seat.member,
                    kind=error.kind,
                    message=error.message,
                )
            )
            # ours, scrubbed, raised outside the `except`: the SDK's exception (the provider's
            # body, maybe the key it was sent) is neither chained nor checkpointed
            raise failed
        message = next((m for m in response.result if isinstance(m, AIMessage)), None)
        usage = usage_from_message(seat.preset, message) if message is not None else None
        await seat.ctx.emit(
            ModelResponseEvent(
                purpose=self.purpose,
                provider=seat.provider,
                model=seat.preset.model,
                preset=seat.preset.name,
                member=seat.member,
                offline=seat.preset.provider == "offline",
                seconds=round(time.monotonic() - started, 4),
                usage=usage.to_dict() if usage else None,
                usage_estimated=bool(
                    message is not None and message.response_metadata.get("usage_estimated")
                ),
                text=clip(content_text(message.content)) if message is not None else "",
                tool_calls=[
                    ToolCallRef(
                        id=c.get("id"), name=c["name"], args=clip(json.dumps(c["args"]), 400)
                    )
                    for c in (message.tool_calls if message is not None else [])
                ],
            )
        )
        return response

    async def awrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResultT:
        seat = self.seat.at(request.runtime)
        source = self.source or seat.source
        call = request.tool_call
        name = call["name"]
        once = seat.once(call.get("id"))
        await seat.ctx.emit(
            ToolCall(
                id=call.get("id"),
                name=name,
                member=seat.member,
                args=clip(json.dumps(call["args"]), 4000),
            ),
            once_per=once,
        )
        started = time.monotonic()
        result = await handler(request)
        message = tool_message(result)
        text = content_text(message.content) if message is not None else str(result)
        await seat.ctx.emit(
            ToolResult(
                id=call.get("id"),
                name=name,
                member=seat.member,
                seconds=round(time.monotonic() - started, 4),
                error=message is not None and message.status == "error",
                content=clip(text),
            ),
            once_per=once,
        )
        if name == "write_todos":
            try:
                todos = TodosUpdated(todos=call["args"].get("todos", []))
            except ValidationError:  # a list the tool refused as well: nothing was updated
                todos = None
            if todos is not None:
                await seat.ctx.emit(todos, once_per=once)
        if name in SOURCE_TOOLS and source is not None and (change := source.change()) is not None:
            await seat.ctx.emit(change)
            await seat.ctx.progress("source")
        return result
