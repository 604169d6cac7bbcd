"""The team's middlewares in the order `team_middleware` gives them, composed by LangChain's own
`create_agent` around a model that must not be reached, on a real SQLite lab.

Each test is one reason the order matters: a call the budget refuses takes no slot and logs
nothing; a provider paused behind the slot is the call's error and gives its reservation back;
an inbox read the history holds is acked even when the watchdog ends the turn there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from justkernel.a2a.board import LabBoard
from justkernel.agents.board_tools import BoardAccess
from justkernel.agents.harness import team_middleware
from justkernel.agents.middleware import Governance, Seat, TeamPaused, TeamSignals
from justkernel.agents.middleware.events import SourceTracker
from justkernel.agents.tools import TeamContext
from justkernel.core.reasons import Reason, ReasonCode
from justkernel.governance.budget import BudgetCaps, BudgetGovernor
from justkernel.governance.limits import ModelCallLimiter, ProviderPaused
from justkernel.governance.watchdog import Watchdog, WatchdogLimits
from justkernel.lab import Lab, open_lab
from justkernel.operators import load_operator
from justkernel.settings import Settings
from justkernel.settings.models import ModelPreset
from justkernel.store.candidates import CandidateStore
from justkernel.store.experiments import ExperimentBook
from justkernel.store.teams import TeamRegistry
from justkernel.teams.workspace import TeamWorkspace

PRESET = ModelPreset(name="fake", provider="openai_compatible", model="fake-model")
PROVIDER = "openai_compatible"


class _NoEvaluator:
    async def evaluate(self, source_dir: Any, **_: Any) -> Any:
        raise AssertionError("these tests never evaluate")


@dataclass
class Team:
    lab: Lab
    ctx: TeamContext
    board: LabBoard
    pauses: list[tuple[str, str]]

    def agent(self, caps: BudgetCaps, limiter: ModelCallLimiter, limits: WatchdogLimits) -> Any:
        async def on_pause(team: str, reason: str) -> None:
            self.pauses.append((team, reason))

        self.gov = Governance(limiter, BudgetGovernor(caps), Watchdog(limits), on_pause)
        self.signals = TeamSignals()
        seat = Seat(self.ctx, PRESET, PROVIDER, self.signals)
        access = BoardAccess(
            self.board, CandidateStore(self.lab.db, self.lab.events, self.lab.blobs)
        )
        stack = team_middleware(seat, self.gov, SourceTracker(self.ctx.workspace), access)
        never = GenericFakeChatModel(messages=iter([]))  # reaching the model fails the test
        return create_agent(model=never, tools=[], middleware=stack)

    async def kinds(self) -> list[str]:
        return [e.kind async for e in self.lab.events.iter_all(self.ctx.run_id)]


@pytest.fixture
async def team(tmp_path: Path, settings: Settings) -> AsyncIterator[Team]:
    lab = await open_lab(settings)
    try:
        run = await lab.runs.create("middleware order")
        registry = TeamRegistry(lab.db)
        member = await registry.register(
            run.id, model_preset="fake", model_label="Fake", workspaces_dir=tmp_path, config={}
        )
        ctx = TeamContext(
            run_id=run.id,
            team_id=member.id,
            workspace=TeamWorkspace.create(tmp_path / "ws", load_operator()),
            evaluator=_NoEvaluator(),
            experiments=ExperimentBook(lab.db),
            events=lab.events,
            blobs=lab.blobs,
        )
        yield Team(lab, ctx, LabBoard(lab.db, lab.events, registry), [])
    finally:
        await lab.close()


HELLO = {"messages": [HumanMessage(content="go")]}


async def test_a_call_the_budget_refuses_takes_no_slot_and_logs_nothing(team: Team) -> None:
    limiter = ModelCallLimiter(total=1)
    limiter.pause(PRESET.name, "a slot would refuse")  # reached, it would raise ProviderPaused
    agent = team.agent(BudgetCaps(team_tokens=10), limiter, WatchdogLimits())
    with pytest.raises(TeamPaused):
        await agent.ainvoke(HELLO)
    assert team.signals.pause_reason is not None
    assert team.signals.pause_reason.code == ReasonCode.TEAM_CAP
    assert team.signals.pause_reason.text().startswith("budget: team ")
    assert team.pauses == [(team.ctx.team_id, team.signals.pause_reason)]
    assert team.signals.failed_provider is None
    assert limiter.peak == 0
    assert not {"model.response", "model.error"} & set(await team.kinds())


async def test_a_provider_paused_behind_the_slot_is_the_calls_error(team: Team) -> None:
    limiter = ModelCallLimiter(total=1)
    limiter.pause(PRESET.name, "balance")  # pauses are per connection: the preset
    caps = BudgetCaps(team_tokens=50_000)
    agent = team.agent(caps, limiter, WatchdogLimits())
    with pytest.raises(ProviderPaused):
        await agent.ainvoke(HELLO)
    assert team.signals.failed_provider == PROVIDER
    assert "model.error" in await team.kinds()
    # the refused call's reservation was given back: the whole cap can be held again
    team.gov.budget.reserve(team.ctx.team_id, PROVIDER, 50_000, None)


async def test_an_inbox_read_is_acked_even_when_the_watchdog_ends_the_turn(team: Team) -> None:
    run, member = team.ctx.run_id, team.ctx.team_id
    news, _ = await team.board.post(
        run,
        sender="judger",
        sender_message_id="result:sub-1:all",
        recipient="all",
        type="feedback",
        payload={"summary": "cand-1: official_pass"},
    )
    assert [m.id for m in await team.board.deliver(run, member, "call-1")] == [news.id]
    history = [
        HumanMessage(content="go"),
        AIMessage(content="", tool_calls=[{"name": "read_inbox", "args": {}, "id": "call-1"}]),
        ToolMessage(content="[feedback]", name="read_inbox", tool_call_id="call-1"),
    ]
    stalled = WatchdogLimits(pause_responses=0)  # the next model call is one too many
    agent = team.agent(BudgetCaps(), ModelCallLimiter(), stalled)
    await agent.ainvoke({"messages": history})  # ends before the model: nothing raised
    assert team.signals.pause_reason == Reason.of(ReasonCode.WATCHDOG)
    assert await team.board.delivery_states(run, news.id) == {member: "acked"}
    assert "model.response" not in await team.kinds()
