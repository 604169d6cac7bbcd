"""One compiled agent graph for many teams: the team is bound per call, not per graph.

Compiling a Deep Agents graph per team cost most of the lab's memory at 100 teams and a good
part of its CPU, although every team of a run has the same shape (tools, middlewares, prompt).
So the harness compiles one graph per shape (`harness.SharedGraphs`) and each turn passes its
team as LangGraph's run context (`ainvoke(..., context=TeamCall(...))`). Everything that
differs between teams is read from that context at the moment it is needed:

- the middlewares find their seat with `Place.at(request.runtime)` (shared.py);
- the lab tools and board tools are built once over `CallContext`, which forwards each
  attribute to the `TeamContext` of the team whose call runs now (`get_runtime()`), so their
  bodies are the ones `tools.build_tools` writes for a single team;
- the file tools go through `CallBackend`, which hands every operation to the team's own
  `WorkspaceBackend` (so the workspace policy is the one a per-team graph had);
- `TeamBindingMiddleware` gives each model call the team's own model (the offline playbook has
  a seed per team) and the team's name in its system prompt, and names the team's replies with
  its id (LangChain names them after the graph, which is no longer the team's).

A call with no team bound raises instead of acting for anyone: a team's tool can never fall
back to another team's workspace. The context is not checkpointed, so a turn resumed after a
crash binds its team again (the scheduler's `TeamAgent` passes it on every invocation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage
from langgraph.runtime import get_runtime

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.middleware.events import SourceTracker
from justkernel.agents.middleware.shared import ModelHandler, TeamSignals
from justkernel.agents.tools import TeamContext

TEAM_NAME_SLOT = "{team_name}"  # left in the shared system prompt, filled per call


@dataclass(frozen=True)
class TeamCall:
    """One team, as its turn binds it into the shared graph (LangGraph's run context)."""

    ctx: TeamContext
    signals: TeamSignals
    source: SourceTracker
    backend: WorkspaceBackend
    team_name: str
    models: Mapping[str | None, BaseChatModel]  # None: the team's own; a role: that member's
    last_input_tokens: dict[str | None, int] = field(default_factory=dict)

    def model_for(self, member: str | None) -> BaseChatModel:
        """A member without a model of its own talks to the team's (as in Deep Agents)."""
        return self.models.get(member) or self.models[None]


def current_call() -> TeamCall:
    """The team whose call runs now; a RuntimeError outside a bound graph call."""
    try:
        team = get_runtime().context
    except (RuntimeError, AttributeError, KeyError):
        team = None
    if not isinstance(team, TeamCall):
        raise RuntimeError("a shared team graph was invoked without its team (context=)")
    return team


class CallContext:
    """Stands in for a `TeamContext` in tools built once for every team: each attribute read
    or written is the bound team's. `blobs` is the lab's (the same for every team) and is
    there before any call, for what a tool set builds up front."""

    def __init__(self, **lab_wide: Any) -> None:
        object.__setattr__(self, "_lab_wide", lab_wide)

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(current_call().ctx, name)
        except RuntimeError:
            lab_wide = object.__getattribute__(self, "_lab_wide")
            if name in lab_wide:
                return lab_wide[name]
            raise

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(current_call().ctx, name, value)


class CallBackend(BackendProtocol):
    """The file tools' backend in a shared graph: every operation is the bound team's
    `WorkspaceBackend`'s (the async ones run the sync ones in a thread, which carries the
    call's context)."""

    @staticmethod
    def _team() -> WorkspaceBackend:
        return current_call().backend

    def ls(self, path: str) -> LsResult:
        return self._team().ls(path)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return self._team().read(file_path, offset, limit)

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
        context_lines: int = 0,
    ) -> GrepResult:
        return self._team().grep(
            pattern, path, glob, max_count=max_count, context_lines=context_lines
        )

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        return self._team().glob(pattern, path)

    def write(self, file_path: str, content: str) -> WriteResult:
        return self._team().write(file_path, content)

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        return self._team().edit(file_path, old_string, new_string, replace_all)

    def delete(self, file_path: str) -> DeleteResult:
        return self._team().delete(file_path)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        return self._team().upload_files(files)

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        return self._team().download_files(paths)


def _named(message: SystemMessage | None, name: str) -> SystemMessage | None:
    if message is None:
        return None
    content = message.content
    if isinstance(content, str):
        if TEAM_NAME_SLOT not in content:
            return message
        return SystemMessage(content=content.replace(TEAM_NAME_SLOT, name))
    blocks = [
        {**b, "text": b["text"].replace(TEAM_NAME_SLOT, name)}
        if isinstance(b, dict) and isinstance(b.get("text"), str)
        else b
        for b in content
    ]
    return SystemMessage(content=blocks)


class TeamBindingMiddleware(AgentMiddleware):
    """Outermost of an agent's middlewares in a shared graph: the call goes to the bound
    team's model (`member`'s when it has one) with the team's name in the system prompt, so
    every inner middleware sees the request a per-team graph made; the team's own replies carry
    the team's id as their name, as a per-team graph (named after its team) gave them, and
    providers are sent that name."""

    def __init__(self, member: str | None = None) -> None:
        super().__init__()
        self.member = member

    async def awrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        call = current_call()
        response = await handler(
            request.override(
                model=call.model_for(self.member),
                system_message=_named(request.system_message, call.team_name),
            )
        )
        if self.member is None:  # a member's subagent graph is named after its role already
            for message in response.result:
                if isinstance(message, AIMessage):
                    message.name = call.ctx.team_id
        return response
