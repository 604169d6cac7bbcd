"""The scheduler: dispatches team turns under the lab's limits, and resumes after a restart.

A turn is one agent invocation: it starts with a goal (or "continue") and ends when the agent
stops calling tools, when the turn times out, or when a middleware pauses the team. Model-call
concurrency is limited inside the agent (its slots middleware), so many teams can be in a turn
at once while only `model_calls` of them talk to a model. After a crash, a team whose
checkpoint stopped mid-turn is resumed from that checkpoint (`ainvoke(None)`), so finished tool
calls are not re-run.

A team has members when `SchedulerConfig.members` is set or its config chooses member models
(`member_models`); the presets are checked when the team is added and again when its agent is
built (presets can change between runs). A team whose agent cannot be built (an unknown preset,
a key that is not stored) is paused with the reason, for a human to fix and resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from pydantic import ValidationError

from justkernel.a2a.board import LabBoard
from justkernel.a2a.external import is_external
from justkernel.a2a.policies import DEFAULT_POLICY, POLICIES, SharingPolicy
from justkernel.agents.approval_desk import ApprovalDesk
from justkernel.agents.board_tools import BoardAccess
from justkernel.agents.errors import ProviderConfigError, classify_error
from justkernel.agents.harness import (
    PresetModel,
    SharedGraphs,
    build_team_agent,
    chat_model,
    member_presets,
    provider_key,
)
from justkernel.agents.mcp import McpToolbox
from justkernel.agents.middleware import Governance, TeamPaused, TeamSignals, inbox_reads
from justkernel.agents.playbook import DONE_MARKER
from justkernel.agents.prompts import CONTINUE_PROMPT, FIRST_PROMPT, RunBrief
from justkernel.agents.skills import is_ascendc_project
from justkernel.agents.tools import EvaluatorLike, TeamContext
from justkernel.core.events.agents import ModelResponse
from justkernel.core.events.runs import (
    DispatchStarted,
    DispatchStopped,
    ProviderResumed,
    ProviderResumeRequested,
    TeamRegistered,
    TeamResumed,
    TeamTurn,
    TeamTurnEnd,
    TeamTurnTimeout,
)
from justkernel.core.events.runs import ProviderPaused as ProviderPausedEvent
from justkernel.core.events.runs import TeamPaused as TeamPausedEvent
from justkernel.core.reasons import Reason, ReasonCode, parse, waits_for
from justkernel.events.log import READ_PAGE
from justkernel.governance.budget import BudgetCaps, BudgetGovernor
from justkernel.governance.limits import ModelCallLimiter, ProviderPaused
from justkernel.governance.watchdog import Watchdog, WatchdogLimits
from justkernel.lab import Lab
from justkernel.operators import OperatorDefinition
from justkernel.scheduler import approvals
from justkernel.scheduler.handoff import CandidateHandoff
from justkernel.scheduler.wake import SHOWN as WAKE_SHOWN
from justkernel.scheduler.wake import wake_prompt
from justkernel.settings.models import ModelPreset
from justkernel.store.teams import Team
from justkernel.teams.proposed_cases import ProposedCases
from justkernel.teams.workspace import TeamWorkspace
from justkernel.workers.evaluator import Evaluator
from justkernel.workers.proposed_cases import extend_evaluator

log = logging.getLogger("justkernel.scheduler")

FAILURE_BACKOFF_START = 5.0
FAILURE_BACKOFF_MAX = 300.0
# how often the dispatch loop looks for resume requests another process logged: a pass runs
# at every turn's end, and a person's request can wait a second
RESUME_POLL_SECONDS = 1.0


class ProviderNotPaused(LookupError):
    """A resume asked for a provider nothing in the run is paused for."""


@dataclass
class SchedulerConfig:
    model_calls: int = 4
    per_provider: dict[str, int] = field(default_factory=dict)
    turn_timeout_seconds: float = 1800.0
    recursion_limit: int = 400
    watchdog: WatchdogLimits = field(default_factory=WatchdogLimits)
    caps: BudgetCaps = field(default_factory=BudgetCaps)
    members: bool = False
    offline_latency_seconds: float = 0.0


@dataclass
class _TeamRuntime:
    team: Team
    preset: ModelPreset
    agent: Any
    signals: TeamSignals  # why the last turn paused, which provider failed
    ctx: TeamContext
    # what the next turn needs of the thread's state, as this process's last turn left it
    # (None: read the checkpoint)
    settled: _Settled | None = None


@dataclass(frozen=True)
class _Settled:
    """A thread's state after a turn that returned with nothing left to run (no interrupt):
    its checkpoint is on disk (durability "sync") and only this scheduler runs the thread, so
    the next turn starts from these facts instead of loading it (`aget_state` replays the
    thread's message deltas, a turn's largest read)."""

    has_messages: bool
    inbox_reads: frozenset[str]

    @classmethod
    def of(cls, messages: list[Any]) -> _Settled:
        return cls(bool(messages), frozenset(inbox_reads(messages)))


class Scheduler:
    def __init__(
        self,
        lab: Lab,
        run_id: str,
        operator: OperatorDefinition,
        evaluator: EvaluatorLike,
        presets: dict[str, ModelPreset],
        checkpointer: Any,
        config: SchedulerConfig | None = None,
        *,
        board: LabBoard,
        freeze_unverified: Callable[[], bool] = lambda: False,
        toolchain_id: str | None = None,
    ) -> None:
        """`board` is the lab's one board (`app.runtime`: the A2A executor shares it, and with
        it the posting rate window). `freeze_unverified` says, at each full receipt, whether the
        Judger wants sources that compiled but failed local precision too (its official-driven
        strategy). `operator` is the run's target view (`for_toolchain`): every workspace is
        its project; `toolchain_id` is that target (default: the one building that project)."""
        self.lab = lab
        self.run_id = run_id
        self.operator = operator
        self.toolchain_id: str = toolchain_id or (
            "ascendc-cpu" if is_ascendc_project(operator) else "cpu"
        )
        self.evaluator = evaluator
        self.presets = presets
        self.checkpointer = checkpointer
        self.config = config or SchedulerConfig()
        self.brief = RunBrief(caps=self.config.caps)  # what the teams' system prompt says
        self.registry = lab.teams
        self.experiments = lab.experiments
        self.board = board
        self.candidates = lab.candidates
        self.handoff = CandidateHandoff(
            run_id,
            self.candidates,
            self.board,
            freeze_unverified=freeze_unverified,
            toolchain_id=self.toolchain_id,
        )
        self.governance = Governance(
            limiter=ModelCallLimiter(self.config.model_calls, dict(self.config.per_provider)),
            budget=BudgetGovernor(self.config.caps),
            watchdog=Watchdog(self.config.watchdog),
            on_pause=self._on_pause,
            approvals=ApprovalDesk.of(lab),
        )
        self.approvals = self.governance.approvals  # the desk of this run's teams
        self._runtimes: dict[str, _TeamRuntime] = {}
        self.graphs = SharedGraphs()  # one compiled agent graph per team shape, for the run
        self.mcp = McpToolbox.for_lab(lab.settings, lab.secrets)  # mcp.toml's tools, if any
        self._failures: dict[str, int] = {}  # consecutive failed turns per team
        self._not_before: dict[str, float] = {}  # backoff after a failed turn
        self._running: dict[str, asyncio.Task[None]] = {}
        self._requests_after: int | None = None  # resume requests up to this seq are answered
        self._shown: dict[str, list[str]] = {}  # board messages a turn's prompt named, per team
        self._asking: set[str] = set()  # teams with a card waiting for a person, this pass
        self.stopped_reason: Reason | None = None

    # -- teams -----------------------------------------------------------------------------
    async def add_team(
        self,
        preset_name: str,
        *,
        sharing: SharingPolicy = DEFAULT_POLICY,
        config: dict[str, Any] | None = None,
    ) -> Team:
        if sharing not in POLICIES:
            raise ValueError(f"unknown sharing policy {sharing!r} (one of {', '.join(POLICIES)})")
        preset = self._preset(preset_name)
        member_presets((config or {}).get("member_models"), self.presets)
        config = {**(config or {}), "sharing": sharing}
        label = preset.display_name or preset.name
        team = await self.registry.register(
            self.run_id,
            model_preset=preset.name,
            model_label=label,
            workspaces_dir=self.lab.settings.workspaces_dir,
            config=config,
        )
        workspace = TeamWorkspace.create(team.workspace, self.operator)
        await self.lab.events.append(
            self.run_id,
            TeamRegistered(
                display_name=team.display_name,
                model_preset=preset.name,
                provider=preset.provider,
                offline=preset.provider == "offline",
                baseline_commit=workspace.head(),
                config=team.config,
            ),
            team=team.id,
        )
        return team

    def _preset(self, name: str) -> ModelPreset:
        try:
            return self.presets[name]
        except KeyError:
            known = ", ".join(sorted(self.presets))
            raise ValueError(f"unknown model preset {name!r} (known: {known})") from None

    async def _runtime(self, team: Team) -> _TeamRuntime:
        if team.id in self._runtimes:
            return self._runtimes[team.id]
        preset = self._preset(team.model_preset)
        members = member_presets(team.config.get("member_models"), self.presets)
        workspace = TeamWorkspace.create(team.workspace, self.operator)
        ctx = TeamContext(
            run_id=self.run_id,
            team_id=team.id,
            workspace=workspace,
            evaluator=self.evaluator,
            experiments=self.experiments,
            events=self.lab.events,
            blobs=self.lab.blobs,
        )
        measured = [
            e.cycles_sum
            for e in await self.experiments.list(self.run_id, team.id)
            if e.status == "measured" and e.cycles_sum is not None
        ]
        ctx.best_cycles = min(measured) if measured else None

        async def progressed(_what: str) -> None:
            self.governance.watchdog.on_progress(team.id)

        ctx.on_progress = progressed
        policy = team.config.get("sharing", DEFAULT_POLICY)

        ctx.on_full_receipt = functools.partial(self.handoff.receive, team, policy)
        ctx.proposed = ProposedCases(
            self.lab.settings.resolved_data_dir / "proposed", self.run_id, team.id, self.operator
        )
        if isinstance(self.evaluator, Evaluator):
            base = self.evaluator
            ctx.extended_evaluator = lambda extra: extend_evaluator(base, extra)

        def model_of(chosen: ModelPreset) -> Any:
            return chat_model(
                chosen,
                self.lab.secrets,
                seed=team.number,
                offline_latency_seconds=self.config.offline_latency_seconds,
                toolchain=self.toolchain_id,
                tool_schemas=self.graphs.tool_schemas,
            )

        agent, signals = build_team_agent(
            ctx,
            model_of(preset),
            preset,
            self.governance,
            self.checkpointer,
            team_name=team.display_name,
            members=self.config.members or bool(team.config.get("member_models")),
            member_models={role: PresetModel(p, model_of(p)) for role, p in members.items()},
            board=BoardAccess(self.board, self.candidates, policy),
            brief=self.brief,
            graphs=self.graphs,
            extra_tools=await self.mcp.tools_for(team.id, team.display_name, preset),
        )
        runtime = _TeamRuntime(team, preset, agent, signals, ctx)
        self._runtimes[team.id] = runtime
        return runtime

    async def _built(self, team: Team) -> _TeamRuntime | None:
        """The team's runtime, or None after pausing the team with the reason it cannot be
        built (retrying cannot help until a human fixes the preset or stores the key)."""
        try:
            return await self._runtime(team)
        except (ValueError, ProviderConfigError) as exc:
            await self._on_pause(team.id, Reason.of(ReasonCode.AGENT_UNBUILT, error=str(exc)))
            return None

    # -- pauses ---------------------------------------------------------------------------
    async def _on_pause(self, team_id: str, reason: Reason) -> None:
        await self.registry.set_status(self.run_id, team_id, "paused", reason.text())
        runtime = self._runtimes.get(team_id)
        if runtime is not None:
            self.governance.watchdog.paused(team_id, self._evidence(runtime))
        await self.lab.events.append(self.run_id, TeamPausedEvent(**reason.fields()), team=team_id)

    def _evidence(self, runtime: _TeamRuntime) -> tuple[str, ...]:
        return (
            runtime.ctx.last_receipt_key or "",
            runtime.ctx.workspace.tree_sha256(),
            self.operator.name,
        )

    async def resume_team(self, team_id: str) -> None:
        """One action: clear a team's pause (the watchdog starts counting afresh)."""
        self.governance.watchdog.on_progress(team_id)
        await self.registry.set_status(self.run_id, team_id, "idle", None)
        await self.lab.events.append(self.run_id, TeamResumed(), team=team_id)

    async def resume_provider(self, provider: str, *, request_seq: int | None = None) -> list[str]:
        """One action, after a person fixed the key or the balance: dispatch to the connection
        `provider` (a preset's name, as `provider.paused` names it) starts again and the teams
        paused for it are idle. Returns those teams' ids.

        Raises `ProviderNotPaused` (nothing changes, nothing is logged) when neither dispatch
        nor any team is paused for it; a request from another process (`request_seq`, see
        `answer_resume_requests`) is answered either way, so it is answered once."""
        teams = [
            t.id
            for t in await self.registry.list(self.run_id, include_exited=False)
            if t.status == "paused" and waits_for(t.status_reason) == provider
        ]
        dispatch_paused = self.governance.limiter.resume(provider)
        if not dispatch_paused and not teams and request_seq is None:
            raise ProviderNotPaused(f"provider {provider!r} is not paused in run {self.run_id}")
        answered = {"request_seq": request_seq} if request_seq is not None else {}
        await self.lab.events.append(
            self.run_id,
            ProviderResumed(provider=provider, connection=provider, teams=teams, **answered),
        )
        for team_id in teams:
            await self.resume_team(team_id)
        return teams

    async def answer_resume_requests(self) -> None:
        """Answer the `provider.resume_requested` events another process (the CLI) logged,
        each once: its `provider.resumed` names the request's seq, so a scheduler that starts
        later skips what an earlier one answered. Called on every dispatch pass; it reads only
        the events logged since the last pass."""
        if self._requests_after is None:
            self._requests_after = await self._last_answered_request()
        upto = (await self.lab.runs.get(self.run_id)).last_seq
        if upto <= self._requests_after:
            return
        requests = await self.lab.events.read(
            self.run_id,
            after=self._requests_after,
            before=upto + 1,
            kinds=[ProviderResumeRequested.KIND],
        )
        for event in requests:
            try:
                request = ProviderResumeRequested.model_validate(event.payload)
            except ValidationError:  # a malformed request asks for nothing
                continue
            if target := request.connection or request.provider:
                await self.resume_provider(target, request_seq=event.seq)
        # a page holds READ_PAGE events: with more waiting, the rest come on the next pass
        full = len(requests) >= READ_PAGE
        self._requests_after = requests[-1].seq if full else upto

    async def _last_answered_request(self) -> int:
        before: int | None = None
        while True:
            page = await self.lab.events.read(
                self.run_id, kinds=[ProviderResumed.KIND], before=before, newest_first=True
            )
            for event in page:
                seq = event.payload.get("request_seq")
                if isinstance(seq, int):
                    return seq
            if len(page) < READ_PAGE:
                return 0
            before = page[-1].seq

    async def _ack_shown(self, team_id: str) -> None:
        """The news a turn's prompt named is seen once the turn has run (the model had it):
        acked, so it neither stays pending nor wakes the team again."""
        shown = self._shown.pop(team_id, None)
        if shown:
            call_id = f"wake-{secrets.token_hex(6)}"
            await self.board.ack_shown(self.run_id, team_id, call_id, shown)

    async def interrupt_turn(self, team_id: str) -> bool:
        """Cancel the team's turn in progress, if any, and wait until it has unwound (a team
        removed mid-turn must not have its turn's end set its status again). True when a
        turn was interrupted."""
        running = self._running.get(team_id)
        if running is None:
            return False
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        return True

    # -- dispatch ---------------------------------------------------------------------------
    def _finished(self, team: Team) -> bool:
        """A team that said it is done and might be woken by news (no turn, run not stopped)."""
        return team.status == "done" and team.id not in self._running and not self.stopped_reason

    async def _news_for_finished(self, teams: list[Team]) -> dict[str, int]:
        """Pending messages per team, read once a pass and only when a finished team could be
        woken by them (a read per finished team per pass cost most of a pass at 100 teams)."""
        if not any(self._finished(t) and not is_external(t) for t in teams):
            return {}
        return await self.board.pending_by_team(self.run_id)

    async def _eligible(self, team: Team, news: dict[str, int]) -> bool:
        """`news`: the pass's pending messages per team (`_news_for_finished`)."""
        if is_external(team):  # an outside agent acts for it over A2A; nothing to dispatch
            return False
        woken = self._finished(team) and news.get(team.id, 0) > 0
        if woken:  # news arrived for a team that had finished: let it read them
            await self.registry.set_status(
                self.run_id, team.id, "idle", _text(ReasonCode.NEW_MESSAGES)
            )
            return True
        if team.id in self._running or team.status in ("done", "exited"):
            return False
        if team.status == approvals.AWAITING:  # its turn goes on once every card is decided
            return self.stopped_reason is None and team.id not in self._asking
        if asyncio.get_running_loop().time() < self._not_before.get(team.id, 0.0):
            return False
        if team.status == "paused":
            paused = parse(team.status_reason)
            if paused is None or paused.code != ReasonCode.WATCHDOG:
                return False  # budget and provider pauses wait for a human
            runtime = await self._built(team)
            if runtime is None:
                return False
            if not self.governance.watchdog.eligible(team.id, self._evidence(runtime)):
                return False
            await self.registry.set_status(self.run_id, team.id, "idle", None)
        return self.stopped_reason is None

    async def recover(self) -> None:
        """After a crash: teams marked running are idle again (their checkpoint says more)."""
        for team in await self.registry.list(self.run_id, include_exited=False):
            if team.status == "running":
                await self.registry.set_status(
                    self.run_id, team.id, "idle", _text(ReasonCode.RECOVERED)
                )
        await self._restore_spend()

    async def _restore_spend(self) -> None:
        """Budgets count what was already spent in this run, from the event log."""
        async for event in self.lab.events.iter_all(self.run_id):
            if event.kind != ModelResponse.KIND or event.team is None:
                continue
            try:
                response = ModelResponse.model_validate(event.payload)
            except ValidationError:  # a malformed one spent nothing we can count
                continue
            usage = response.usage
            if usage is None or not usage.model_fields_set:
                continue
            reservation = self.governance.budget.reserve(
                event.team, response.provider or "?", 0, None
            )
            self.governance.budget.settle(reservation, usage.total, usage.cost_usd)

    async def run(
        self,
        *,
        seconds: float | None = None,
        stop: asyncio.Event | None = None,
        busy: Callable[[], Awaitable[bool]] | None = None,
    ) -> Reason:
        """Dispatch turns until time is up, `stop` is set, or no team has work left (and
        `busy`, e.g. a Judger waiting for official results, says nothing more will come)."""
        await self.recover()
        await self.lab.events.append(self.run_id, DispatchStarted(seconds=seconds))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds if seconds is not None else None
        requests_due = loop.time()
        ends_at = datetime.now(UTC) + timedelta(seconds=seconds) if seconds is not None else None
        self.brief = RunBrief(ends_at=ends_at, judger=busy is not None, caps=self.config.caps)
        reason = Reason.of(ReasonCode.NO_WORK)
        try:
            while True:
                if stop is not None and stop.is_set():
                    reason = Reason.of(ReasonCode.STOPPED)
                    break
                if deadline is not None and loop.time() >= deadline:
                    reason = Reason.of(ReasonCode.TIME_LIMIT)
                    break
                if loop.time() >= requests_due:
                    await self.answer_resume_requests()
                    await self.approvals.refresh(self.run_id)  # modes another process set
                    requests_due = loop.time() + RESUME_POLL_SECONDS
                # asked before the teams are looked at: once `busy` says no, the news it was
                # waiting for is already on the board, so a team it is for is woken below
                waiting = busy is not None and not self._running and await busy()
                teams = await self.registry.list(self.run_id, include_exited=False)
                # a team waiting for a person has work left: the run waits with it; one read
                # a pass says which of them still wait
                self._asking = await approvals.asking(self.approvals, self.run_id, teams)
                waiting = waiting or any(t.status == approvals.AWAITING for t in teams)
                news = await self._news_for_finished(teams)
                for team in teams:
                    if await self._eligible(team, news):
                        self._running[team.id] = asyncio.create_task(self._turn(team))
                if not self._running:
                    if self.stopped_reason:
                        reason = self.stopped_reason
                        break
                    if not self._backing_off() and not waiting:
                        break
                    await asyncio.sleep(0.5)
                    continue
                await asyncio.wait(
                    list(self._running.values()),
                    timeout=0.5,
                    return_when=asyncio.FIRST_COMPLETED,
                )
        finally:
            await self._cancel_running()
            await self.lab.events.append(self.run_id, DispatchStopped(**reason.fields()))
        return reason

    def _backing_off(self) -> bool:
        now = asyncio.get_running_loop().time()
        return any(t > now for t in self._not_before.values())

    def _record_failure(self, team_id: str) -> float:
        """Exponential backoff after failed turns: 5 s, 10 s, ... up to 5 minutes."""
        count = self._failures.get(team_id, 0) + 1
        self._failures[team_id] = count
        delay = min(FAILURE_BACKOFF_MAX, FAILURE_BACKOFF_START * 2 ** (count - 1))
        self._not_before[team_id] = asyncio.get_running_loop().time() + delay
        return delay

    async def _cancel_running(self) -> None:
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._running.clear()

    async def _turn(self, team: Team) -> None:
        try:
            await self._turn_inner(team)
        finally:
            self._running.pop(team.id, None)

    async def _turn_inner(self, team: Team) -> None:
        runtime = await self._built(team)
        if runtime is None:
            return
        runtime.signals.pause_reason = None
        runtime.signals.failed_provider = None
        runtime.signals.failed_connection = None
        cfg = {
            "configurable": {"thread_id": f"{self.run_id}:{team.id}"},
            "recursion_limit": self.config.recursion_limit,
        }
        settled, runtime.settled = runtime.settled, None
        snapshot = None if settled is not None else await runtime.agent.aget_state(cfg)
        if settled is None:
            settled = _Settled.of(snapshot.values.get("messages", []))
        # nothing of the team runs now: what a read never returned is delivered again
        await self.board.release_unseen(self.run_id, team.id, set(settled.inbox_reads))
        if snapshot is not None and snapshot.next:
            turn_input: Any = None  # resume the interrupted turn from its checkpoint
            how = "resumed"
            if snapshot.interrupts:  # stopped for a person: on once every card is decided
                waiting = await approvals.waiting_for(self.approvals, snapshot.interrupts)
                if waiting is not None:
                    await self.registry.set_status(
                        self.run_id, team.id, approvals.AWAITING, _awaiting(waiting).text()
                    )
                    return
                # a grant remembered from another process counts for the resumed call's kin
                await self.approvals.refresh(self.run_id)
                turn_input = await approvals.resume_command(self.approvals, snapshot.interrupts)
        else:
            first = not settled.has_messages
            # news on the board: the prompt names it, and it is acked when the turn ends
            news = [] if first else await self.board.news(self.run_id, team.id)
            if news:
                self._shown[team.id] = [m.id for m in news[:WAKE_SHOWN]]
                prompt = wake_prompt(news)
            else:
                prompt = FIRST_PROMPT if first else CONTINUE_PROMPT
            turn_input = {"messages": [HumanMessage(content=prompt)]}
            how = "started"
        await self.registry.set_status(self.run_id, team.id, "running", None)
        await self.lab.events.append(self.run_id, TeamTurn(state=how), team=team.id)
        outcome: str = "idle"
        detail: Reason | None = None
        try:
            async with asyncio.timeout(self.config.turn_timeout_seconds):
                # each step is on disk before the next starts: a lab killed in a tool call
                # resumes at that very call ("async" could lose the steps before it)
                result = await runtime.agent.ainvoke(turn_input, cfg, durability="sync")
            await self._ack_shown(team.id)
            interrupts = approvals.interrupted(result)
            if not interrupts and isinstance(result, dict):
                runtime.settled = _Settled.of(result.get("messages", []))
            waiting = await approvals.waiting_for(self.approvals, interrupts)
            if waiting is not None:
                outcome, detail = approvals.AWAITING, _awaiting(waiting)
            elif runtime.signals.pause_reason:
                outcome, detail = "paused", runtime.signals.pause_reason
            elif _said_done(result):
                outcome, detail = "done", Reason.of(ReasonCode.NOTHING_LEFT)
        except TeamPaused as exc:
            outcome, detail = "paused", runtime.signals.pause_reason or exc.reason
            if exc.reason.code == ReasonCode.RUN_CAP:
                self.stopped_reason = exc.reason
        except ProviderPaused as exc:
            outcome, detail = "paused", _provider_paused(exc.provider, exc.reason)
        except TimeoutError:
            seconds = float(self.config.turn_timeout_seconds)
            detail = Reason.of(ReasonCode.TURN_TIMEOUT, seconds=seconds)
            await self.lab.events.append(self.run_id, TeamTurnTimeout(), team=team.id)
            self._record_failure(team.id)
        except asyncio.CancelledError:
            await self.registry.set_status(
                self.run_id, team.id, "idle", _text(ReasonCode.INTERRUPTED)
            )
            raise
        except Exception as exc:
            error = classify_error(exc)
            # a member's call may have failed, on the member's own preset: the pause is that
            # connection's (its URL and key), not every preset's of its provider type
            provider = runtime.signals.failed_provider or provider_key(runtime.preset)
            connection = runtime.signals.failed_connection or runtime.preset.name
            if error.pauses_dispatch:
                self.governance.limiter.pause(connection, error.message)
                await self.lab.events.append(
                    self.run_id,
                    ProviderPausedEvent(
                        provider=provider,
                        connection=connection,
                        kind=error.kind,
                        reason=error.message,
                    ),
                )
                outcome, detail = "paused", _provider_paused(connection, error.message, error.kind)
            else:
                delay = self._record_failure(team.id)
                detail = Reason.of(
                    ReasonCode.TURN_FAILED, kind=error.kind, message=error.message, seconds=delay
                )
                log.warning("team %s: %s", team.id, detail.text())
        if detail is None or outcome in ("done", approvals.AWAITING):
            self._failures.pop(team.id, None)
        if outcome == "paused" and runtime.signals.pause_reason is None:
            await self._on_pause(team.id, detail or Reason.of(ReasonCode.PAUSED))
        elif outcome != "paused":
            await self.registry.set_status(self.run_id, team.id, outcome, _text_of(detail))
        await self.lab.events.append(self.run_id, _turn_end(outcome, detail), team=team.id)


def _said_done(result: Any) -> bool:
    messages = result.get("messages", []) if isinstance(result, dict) else []
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    return last is not None and not last.tool_calls and DONE_MARKER in str(last.content)


def _text(code: ReasonCode) -> str:
    """The stored status reason of a code without values."""
    return Reason.of(code).text()


def _text_of(reason: Reason | None) -> str | None:
    return reason.text() if reason is not None else None


def _provider_paused(connection: str, message: str, kind: str | None = None) -> Reason:
    """A team waits for its connection; `kind` (auth, balance, config) when it is known."""
    extra = {"kind": kind} if kind else {}
    return Reason.of(ReasonCode.PROVIDER_PAUSED, connection=connection, message=message, **extra)


def _turn_end(outcome: str, detail: Reason | None) -> TeamTurnEnd:
    if detail is None:
        return TeamTurnEnd(status=outcome, detail=None)
    code, params = detail.code.value, detail.params
    return TeamTurnEnd(status=outcome, detail=detail.text(), reason_code=code, reason_params=params)


def _awaiting(waiting: approvals.Waiting) -> Reason:
    """A team stopped for a person: which tools, which cards."""
    tools, ids = ", ".join(waiting.tools), ", ".join(waiting.request_ids)
    return Reason.of(ReasonCode.AWAITING_APPROVAL, tools=tools, ids=ids)
