"""What the team's middlewares share: who is calling (`Seat`, or `Place` in a graph every team
shares, which finds the team in the call's run context), the run-wide limits (`Governance`),
what a turn leaves for the scheduler (`TeamSignals`), the typed handler of each hook, and the
clipping every recorded text goes through (secrets scrubbed, bounded size)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command

from justkernel.agents.tools import TeamContext
from justkernel.core.reasons import Reason
from justkernel.governance.budget import BudgetGovernor
from justkernel.governance.limits import ModelCallLimiter
from justkernel.governance.watchdog import Watchdog
from justkernel.settings.models import ModelPreset
from justkernel.settings.redaction import scrub

if TYPE_CHECKING:
    from justkernel.agents.approval_desk import ApprovalDesk
    from justkernel.agents.middleware.events import SourceTracker

TEXT_LIMIT = 2000

# the next layer of a hook: the inner middlewares and, innermost, the model or the tool
ModelHandler = Callable[[ModelRequest], Awaitable[ModelResponse]]
ToolResultT = ToolMessage | Command[Any]
ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResultT]]


class TeamPaused(RuntimeError):
    """The turn stopped because the team was paused (watchdog, budget or provider)."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.text())
        self.reason = reason


@dataclass
class TeamSignals:
    """What a turn leaves for the scheduler. One per team, shared by its agent and its
    members: a member that pauses or fails stops the team's turn, and the scheduler reads
    here why (and on which provider a model call failed)."""

    pause_reason: Reason | None = None
    failed_provider: str | None = None  # the provider of the last failed model call
    failed_connection: str | None = None  # its connection: the preset that made the call


@dataclass
class Governance:
    """The run-wide limits shared by every team's middlewares."""

    limiter: ModelCallLimiter
    budget: BudgetGovernor
    watchdog: Watchdog
    on_pause: Callable[[str, Reason], Awaitable[None]]  # (team, reason)
    seen_input_tokens: dict[str, int] = field(default_factory=dict)  # last prompt per provider
    # approval modes of supervised teams (None: no call ever asks a person)
    approvals: ApprovalDesk | None = None


@dataclass(frozen=True)
class Seat:
    """One agent of a team: the team's own (`member` None) or a member's, on the preset and
    provider that actually serve it. A member runs its own middleware stack (a Deep Agents
    subagent does not inherit the team's), so each stack is built for its seat."""

    ctx: TeamContext
    preset: ModelPreset
    provider: str
    signals: TeamSignals
    member: str | None = None
    source: SourceTracker | None = None  # the team's, when the seat was bound from a call
    # the last prompt size the provider reported, per agent of the team (None: the team's own)
    last_input_tokens: dict[str | None, int] = field(default_factory=dict)

    @property
    def team_id(self) -> str:
        return self.ctx.team_id

    def at(self, runtime: Runtime[Any] | None) -> Seat:
        """A seat built for one team is that team's at every call."""
        return self

    def for_member(self, member: str, preset: ModelPreset, provider: str) -> Seat:
        return replace(self, preset=preset, provider=provider, member=member)

    def once(self, call_id: str | None) -> str | None:
        """The dedup key of a tool call's events: a member's ids come from another
        conversation (maybe another provider), so they are kept apart from the team's."""
        if call_id is None or self.member is None:
            return call_id
        return f"{self.member}:{call_id}"

    async def pause(self, governance: Governance, reason: Reason) -> None:
        """Pause the team (not only this seat): the scheduler reads the reason after the
        turn, and `on_pause` records it now."""
        self.signals.pause_reason = reason
        await governance.on_pause(self.team_id, reason)


def call_runtime() -> Runtime[Any] | None:
    """The runtime of the graph call this code runs in, or None outside any (for a part that
    is handed no request, such as a summary call or a history write)."""
    try:
        return get_runtime()
    except RuntimeError:  # outside a runnable context
        return None


class BoundTeam(Protocol):
    """What a call's run context carries for the middlewares of a shared graph
    (`agents.binding.TeamCall`)."""

    ctx: TeamContext
    signals: TeamSignals
    source: SourceTracker
    last_input_tokens: dict[str | None, int]


@dataclass(frozen=True)
class Place:
    """A seat without its team: one agent's place (the team's own, or a member's) in a graph
    every team of a run shares. The team is bound per call, through LangGraph's run context
    (`ainvoke(..., context=TeamCall)`), so one compiled graph serves them all."""

    preset: ModelPreset
    provider: str
    member: str | None = None

    def for_member(self, member: str, preset: ModelPreset, provider: str) -> Place:
        return replace(self, preset=preset, provider=provider, member=member)

    def at(self, runtime: Runtime[Any] | None) -> Seat:
        """The seat of the team this call runs for. A call with no team bound is a wiring
        error, never a reason to act for some other team."""
        team: BoundTeam | None = getattr(runtime, "context", None)
        if team is None or not hasattr(team, "ctx"):
            raise RuntimeError("a shared team graph was invoked without its team (context=)")
        return Seat(
            team.ctx,
            self.preset,
            self.provider,
            team.signals,
            self.member,
            team.source,
            team.last_input_tokens,
        )


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = scrub(text)
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def content_text(content: Any) -> str:
    """The text of a message's content (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return str(content)
