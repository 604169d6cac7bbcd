"""The team harness: a Deep Agents agent per team, rooted in the team's workspace, on one compiled
graph every team of the same shape shares (`SharedGraphs`; each call binds its team through
LangGraph's run context, see `agents.binding`).

The agent gets the built-in file tools and the todo list (confined to the workspace by
`WorkspaceBackend`), the lab tools (`build_tools`), the skills copied into the workspace (with
the Ascend C versions on top for an Ascend C workspace: `agents.skills`), the team's
middlewares (`team_middleware`: inbox acks, watchdog, budget, events, tool-call ids and
malformed calls, model-call slots) and a
checkpointer keyed by the team's thread, so a restarted lab resumes every team where it was.

A team may have members (analyst, developer, reviewer): Deep Agents subagents the team's model
delegates to with the `task` tool. A member runs on the preset the team's config chose for it
(`member_models`: role → preset name), else on the team's model. An `offline` choice also means
the team's model: the offline model plays a whole team's playbook (plans, edits, simulations),
which is no member's job and would rewrite the shared workspace behind the team's back. Each
member has a middleware stack of its own (a subagent does not inherit the team's), built the
same way for the member's seat, so its model calls take the same budget, model-call slots and
usage events as the team's; a member's pause is the team's (`TeamSignals` is shared).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from deepagents import (
    FilesystemPermission,
    GeneralPurposeSubagentProfile,
    HarnessProfile,
    create_deep_agent,
    register_harness_profile,
)
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.binding import (
    TEAM_NAME_SLOT,
    CallBackend,
    CallContext,
    TeamBindingMiddleware,
    TeamCall,
)
from justkernel.agents.board_tools import BoardAccess, build_board_tools
from justkernel.agents.mcp import offered_tools
from justkernel.agents.middleware.approvals import ApprovalsMiddleware
from justkernel.agents.middleware.budget import BudgetMiddleware
from justkernel.agents.middleware.events import EventsMiddleware, SourceTracker
from justkernel.agents.middleware.inbox import InboxAcksMiddleware
from justkernel.agents.middleware.lean_hooks import (
    LabSkillsMiddleware,
    LabTodoListMiddleware,
    LabUnsupportedContentMiddleware,
)
from justkernel.agents.middleware.shared import Governance, Place, Seat, TeamSignals
from justkernel.agents.middleware.slots import ModelCallSlotsMiddleware
from justkernel.agents.middleware.tool_calls import (
    EXCLUDED_TOOLS,
    MalformedCallsMiddleware,
    ToolCallsMiddleware,
)
from justkernel.agents.middleware.watchdog import WatchdogMiddleware
from justkernel.agents.offline import OFFLINE_PROVIDER, OfflinePlaybookModel, ToolSchemas
from justkernel.agents.prompts import (
    FIXED_FILES,
    SKILLS_PROMPT,
    TODO_SYSTEM_PROMPT,
    TODO_TOOL_DESCRIPTION,
    RunBrief,
    system_prompt,
)
from justkernel.agents.providers import build_chat_model
from justkernel.agents.skills import is_ascendc_project, skill_sources
from justkernel.agents.summarization import summarization_middleware
from justkernel.agents.tools import TeamContext, build_tools
from justkernel.core.targets import playbook_target
from justkernel.operators import OperatorDefinition
from justkernel.settings.models import ModelPreset
from justkernel.settings.secrets import SecretsStore

MEMBERS = [
    {
        "name": "analyst",
        "description": "Reads receipts and logs and explains where cycles or precision are lost.",
        "system_prompt": "You analyse receipts (read_simulation_results) and name the bottleneck "
        "with evidence: which case, which counter or pipe, how much. You do not edit files.",
    },
    {
        "name": "developer",
        "description": "Implements one planned change in op_kernel/ or op_host/ and compiles it.",
        "system_prompt": "You implement exactly the change in the recorded plan, in op_kernel/ or "
        "op_host/, compile it with compile_kernel and fix diagnostics.",
    },
    {
        "name": "reviewer",
        "description": "Checks a candidate against the rules before it is simulated or shared.",
        "system_prompt": "You review the current source against the rule-review skill: files, "
        "ABI, memory, precision, generalisation. Report problems; do not edit.",
    },
]

MEMBER_ROLES = tuple(m["name"] for m in MEMBERS)

WORKSPACE_FIXED = ["/skills/**", "/spec.md"]  # the lab's, in every workspace


def forbidden_writes(operator: OperatorDefinition) -> list[str]:
    """What the agent's file tools may never write, from the project it works on: every
    template entry outside the editable folders (the C port's include/, harness/, Makefile;
    the Ascend C project's CMakeLists.txt, CMakePresets.json, build.sh, examples/), the
    forbidden paths inside them (the Ascend C op_host/op_kernel CMakeLists.txt), the skills and
    the spec. The workspace refuses these writes too (`TeamWorkspace.resolve`); this keeps the
    agent's own permission list in step with the project's rules."""
    editable_roots = {p.split("/", 1)[0] for p in operator.paths.editable}
    denied: list[str] = []
    for entry in sorted(operator.project_dir.iterdir()):
        if entry.name in editable_roots:
            continue
        denied.append(f"/{entry.name}/**" if entry.is_dir() else f"/{entry.name}")
    covered = {d.removesuffix("/**") for d in denied}
    for pattern in operator.paths.forbidden:
        if f"/{pattern}".removesuffix("/**") not in covered:
            denied.append(f"/{pattern}")
    return denied + WORKSPACE_FIXED


@dataclass(frozen=True)
class PresetModel:
    """A preset and the chat model built from it: what one agent of a team talks to."""

    preset: ModelPreset
    model: BaseChatModel


def chat_model(
    preset: ModelPreset,
    secrets: SecretsStore,
    *,
    seed: int = 0,
    offline_latency_seconds: float = 0.0,
    toolchain: str = "cpu",
    tool_schemas: ToolSchemas | None = None,
) -> BaseChatModel:
    """The one place a preset becomes a chat model: the offline playbook (`seed` picks the
    route, so teams differ; `toolchain` the playbook of the project the team writes: the C
    port's or the Ascend C one; `tool_schemas` the run's converted tool schemas) or an
    OpenAI-compatible client (ProviderConfigError when the preset cannot be built, e.g. its
    key is not stored)."""
    if preset.provider == "offline":
        model = OfflinePlaybookModel(
            seed=seed, target=playbook_target(toolchain), latency_seconds=offline_latency_seconds
        )
        return model if tool_schemas is None else model.share_schemas(tool_schemas)
    return build_chat_model(preset, secrets)


def _check_role(role: str) -> None:
    if role not in MEMBER_ROLES:
        raise ValueError(f"unknown member role {role!r} (one of {', '.join(MEMBER_ROLES)})")


def member_presets(
    choices: Mapping[str, str] | None, presets: Mapping[str, ModelPreset]
) -> dict[str, ModelPreset]:
    """The presets a team's config chose for its members (role → preset name), checked.

    An unknown role or preset is a ValueError that names it. Offline choices are left out: such
    a member runs on the team's model (see the module docstring).
    """
    chosen: dict[str, ModelPreset] = {}
    for role, name in (choices or {}).items():
        _check_role(role)
        preset = presets.get(name)
        if preset is None:
            known = ", ".join(sorted(presets))
            raise ValueError(f"member {role!r}: unknown model preset {name!r} (known: {known})")
        if preset.provider != "offline":
            chosen[role] = preset
    return chosen


@cache
def register_profiles() -> None:
    """Trim the harness for our providers: no shell tool, no general-purpose subagent."""
    common = {
        "excluded_tools": EXCLUDED_TOOLS,
        "general_purpose_subagent": GeneralPurposeSubagentProfile(enabled=False),
    }
    for provider in ("openai", "deepseek", "qwen"):
        register_harness_profile(provider, HarnessProfile(**common))
    # the offline playbook needs no summarisation: it reads its place from its own call ids
    register_harness_profile(
        OFFLINE_PROVIDER,
        HarnessProfile(**common, excluded_middleware=frozenset({"SummarizationMiddleware"})),
    )


def provider_key(preset: ModelPreset) -> str:
    return OFFLINE_PROVIDER if preset.provider == "offline" else preset.provider


def team_middleware(
    seat: Seat | Place,
    governance: Governance,
    source: SourceTracker | None,
    board: BoardAccess | None,
) -> list[AgentMiddleware]:
    """One agent's middlewares, in the order they must run (the first is the outermost
    around a model call, and `before_model` hooks run first to last):

    1. inbox acks, before the watchdog: a read the history already holds is acked even when
       the watchdog ends the turn at this model call;
    2. the watchdog, before the budget: a paused or stalled team spends nothing; around the
       call it counts only a response the model gave;
    3. the malformed-call answers, outside the events: a response is on record before the
       answers to its unparsable calls;
    4. the budget, outside the events: a call the caps refuse never happened (no event, no
       slot), and a reservation covers the wait for a slot;
    5. the events, outside the slots: `seconds` counts the wait for a slot, and a provider
       paused behind the slot is recorded as the call's error;
    6. the tool calls, inside the events: a response's ids are made unique in the thread
       before the events (or anything else) see them, so the ids recorded are the ids the
       tools run with;
    7. the approvals (when the run has a desk), inside the events and the tool calls: a call
       that waits for a person is on record (`tool.call`) and is a tool the agent has; its
       result, run or rejected, is recorded when the decision resumes it;
    8. the model-call slot, innermost: held only while the model runs.

    None of them has a `before_model` or `after_model` hook: each hook is a graph node, and
    each node a checkpoint write per agent step (`lean_hooks`).

    In a shared graph `seat` is a `Place` and `source` None: each call finds its team in the
    run context, and `build_team_agent` puts `TeamBindingMiddleware` outside them all.
    """
    stack: list[AgentMiddleware] = []
    if board is not None:
        stack.append(InboxAcksMiddleware(seat, board))
    calls = ToolCallsMiddleware(seat, board.board if board is not None else None)
    stack += [
        WatchdogMiddleware(seat, governance),
        MalformedCallsMiddleware(calls),
        BudgetMiddleware(seat, governance),
        EventsMiddleware(seat, source),
        calls,
    ]
    if governance.approvals is not None:
        stack.append(ApprovalsMiddleware(seat, governance.approvals))
    stack.append(ModelCallSlotsMiddleware(seat, governance))
    return stack


def _member_specs(
    place: Place,
    team: PresetModel,
    chosen: Mapping[str, PresetModel],
    middleware: Callable[[Place, BaseChatModel], list[AgentMiddleware]],
) -> list[dict[str, Any]]:
    """One subagent spec per member: its own model when one was chosen (else Deep Agents gives
    it the team's) and its own middlewares, on the preset and model that actually serve it.
    The call's team is bound by the member's `TeamBindingMiddleware` (its model:
    `TeamCall.model_for`)."""
    for role in chosen:
        _check_role(role)
    specs: list[dict[str, Any]] = []
    for member in MEMBERS:
        role = member["name"]
        serving = chosen.get(role) or team
        for_place = place.for_member(role, serving.preset, provider_key(serving.preset))
        choice = chosen.get(role)
        spec: dict[str, Any] = {
            **member,
            "middleware": [TeamBindingMiddleware(role), *middleware(for_place, serving.model)],
        }
        if choice is not None:
            spec["model"] = choice.model
        specs.append(spec)
    return specs


GraphShape = tuple[Any, ...]


@dataclass
class SharedGraphs:
    """The compiled agent graphs of one run, one per shape: every team with the same preset,
    members and member presets, sharing policy and project runs on the same graph. One per
    scheduler (its governance, board and checkpointer are in every graph it compiles)."""

    graphs: dict[GraphShape, Any] = field(default_factory=dict)
    # the offline models' converted tool schemas: every graph's tools, converted once a run
    tool_schemas: ToolSchemas = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.graphs)


@dataclass(frozen=True)
class TeamAgent:
    """A team's agent: the shared graph and the team it binds on every invocation (the run
    context is not checkpointed, so a resumed turn binds it again)."""

    graph: Any
    call: TeamCall

    async def aget_state(self, config: Any) -> Any:
        return await self.graph.aget_state(config)

    async def ainvoke(self, turn_input: Any, config: Any, **kwargs: Any) -> Any:
        return await self.graph.ainvoke(turn_input, config, context=self.call, **kwargs)


def _shape(
    ctx: TeamContext,
    preset: ModelPreset,
    members: bool,
    chosen: Mapping[str, PresetModel],
    board: BoardAccess | None,
) -> GraphShape:
    """What decides a graph's make-up: two teams that agree on all of it share one graph."""
    return (
        str(ctx.workspace.operator.project_dir),
        preset.model_dump_json(),
        members,
        tuple(sorted((role, c.preset.model_dump_json()) for role, c in chosen.items())),
        None if board is None else (id(board.board), id(board.candidates), board.policy),
    )


def _compile(
    ctx: TeamContext,
    model: BaseChatModel,
    preset: ModelPreset,
    governance: Governance,
    checkpointer: Any,
    *,
    members: bool,
    chosen: Mapping[str, PresetModel],
    board: BoardAccess | None,
    brief: RunBrief,
    extra_tools: Sequence[BaseTool] = (),
) -> Any:
    """The graph of a shape, built around the first team of that shape (its model and
    member models are only the defaults: `TeamBindingMiddleware` routes every call to the
    bound team's)."""
    place = Place(preset, provider_key(preset))
    backend = CallBackend()

    def middleware(for_place: Place, for_model: BaseChatModel) -> list[AgentMiddleware]:
        stack = team_middleware(for_place, governance, None, board)
        if for_place.provider == OFFLINE_PROVIDER:  # the offline playbook is never summarised
            return stack
        # in place of Deep Agents' own: counted, sized to the model, history in scratch/; its
        # summary call goes to the bound team's model like every other call
        summaries = summarization_middleware(
            for_place,
            governance,
            None,
            for_model,
            backend,
            outer=[TeamBindingMiddleware(for_place.member)],
        )
        return [summaries, *stack]

    team = PresetModel(preset, model)
    subagents = _member_specs(place, team, chosen, middleware) if members or chosen else None
    call_ctx: TeamContext = CallContext(blobs=ctx.blobs)  # type: ignore[assignment]
    lab_tools = build_tools(call_ctx) + (build_board_tools(call_ctx, board) if board else [])
    tools = offered_tools(lab_tools, extra_tools)  # MCP tools (`agents.mcp`): no name clash
    operator = ctx.workspace.operator
    sources = skill_sources(operator)
    # in place of Deep Agents' own (same name): the lab's words for the skills, not its
    # generic ones (web research, helper scripts)
    skills = LabSkillsMiddleware(backend=backend, sources=sources, system_prompt=SKILLS_PROMPT)
    return create_deep_agent(
        model=model,
        tools=tools,
        system_prompt=system_prompt(
            TEAM_NAME_SLOT,
            operator.operator.display_name,
            FIXED_FILES["ascendc" if is_ascendc_project(operator) else "cpu"],
            brief,
        ),
        middleware=[
            TeamBindingMiddleware(),
            LabTodoListMiddleware(
                system_prompt=TODO_SYSTEM_PROMPT, tool_description=TODO_TOOL_DESCRIPTION
            ),
            skills,
            LabUnsupportedContentMiddleware(),
            *middleware(place, model),
        ],
        subagents=subagents,
        skills=[path for path, _label in sources],  # the middleware is ours (`skills`)
        permissions=[
            FilesystemPermission(
                operations=["write"], paths=forbidden_writes(operator), mode="deny"
            )
        ],
        backend=backend,
        context_schema=TeamCall,
        checkpointer=checkpointer,
        name="team",
    )


def build_team_agent(
    ctx: TeamContext,
    model: BaseChatModel,
    preset: ModelPreset,
    governance: Governance,
    checkpointer: Any,
    *,
    team_name: str,
    members: bool = False,
    member_models: Mapping[str, PresetModel] | None = None,
    board: BoardAccess | None = None,
    brief: RunBrief | None = None,
    graphs: SharedGraphs | None = None,
    extra_tools: Sequence[BaseTool] = (),
) -> tuple[TeamAgent, TeamSignals]:
    """The agent of one team and its signals (the scheduler reads why a turn paused, and
    which provider failed).

    The team has members when `members` is set or `member_models` chooses a model for one.
    `brief` is what the system prompt says of the run (its end, its Judger, its caps).
    Its graph is `graphs`' for the team's shape, compiled on first use (without `graphs`, a
    graph of its own). `extra_tools` (the team's MCP tools) join the lab's, never for the
    offline model.
    """
    register_profiles()
    chosen = member_models or {}
    members = members or bool(chosen)
    graphs = graphs if graphs is not None else SharedGraphs()
    brief = brief or RunBrief()
    extra = () if provider_key(preset) == OFFLINE_PROVIDER else tuple(extra_tools)
    shape = (*_shape(ctx, preset, members, chosen, board), repr(brief), *(t.name for t in extra))
    graph = graphs.graphs.get(shape)
    if graph is None:
        graph = _compile(
            ctx,
            model,
            preset,
            governance,
            checkpointer,
            members=members,
            chosen=chosen,
            board=board,
            brief=brief,
            extra_tools=extra,
        )
        graphs.graphs[shape] = graph
    signals = TeamSignals()
    call = TeamCall(
        ctx=ctx,
        signals=signals,
        source=SourceTracker(ctx.workspace),  # one for the team: members share its workspace
        backend=WorkspaceBackend(ctx.workspace),
        team_name=team_name,
        models={None: model, **{role: c.model for role, c in chosen.items()}},
    )
    return TeamAgent(graph, call), signals
