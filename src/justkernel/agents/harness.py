"""The team harness: one Deep Agents agent per team, rooted in the team's workspace.

The agent gets the built-in file tools and the todo list (confined to the workspace by
`WorkspaceBackend`), the lab tools (`build_tools`), the skills copied into the workspace, the
observer middleware (events, limits, watchdog) and a checkpointer keyed by the team's thread,
so a restarted lab resumes every team where it was.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from deepagents import (
    FilesystemPermission,
    GeneralPurposeSubagentProfile,
    HarnessProfile,
    create_deep_agent,
    register_harness_profile,
)
from langchain.agents.middleware import TodoListMiddleware
from langchain_core.language_models import BaseChatModel

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.board_tools import BoardAccess, build_board_tools
from justkernel.agents.observer import Governance, TeamObserver
from justkernel.agents.offline import OFFLINE_PROVIDER
from justkernel.agents.tools import TeamContext, build_tools
from justkernel.settings.models import ModelPreset
from justkernel.teams.workspace import SKILLS_DIR

SYSTEM_PROMPT = """You are {team_name}, an engineering team optimizing the {operator} kernel of \
the JustKernel lab. Your workspace is a copy of the operator project: `/spec.md` explains the \
operator and the rules; `/op_host/` (tiling) and `/op_kernel/` (kernel) are yours to change; \
`/include/`, `/harness/` and the build flags are fixed. `/scratch/` is for your notes.

Goal: the fewest estimated cycles (sum over the performance cases) with every local case passing \
the precision standard. Evidence comes only from receipts: never claim a result you have not \
simulated. Follow the engineering-workflow skill: record a plan, change one thing, compile, probe, \
run a full simulation, keep or revert. Keep your todo list current. When you have nothing better \
to try, say so and end your reply with [done]."""

MEMBERS = [
    {
        "name": "analyst",
        "description": "Reads receipts and logs and explains where cycles or precision are lost.",
        "system_prompt": "You analyse receipts (read_simulation_results) and name the bottleneck "
        "with evidence: which case, which counter, how much. You do not edit files.",
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

FORBIDDEN_WRITES = ["/include/**", "/harness/**", "/Makefile", "/skills/**", "/spec.md"]


@cache
def register_profiles() -> None:
    """Trim the harness for our providers: no shell tool, no general-purpose subagent."""
    common = {
        "excluded_tools": frozenset({"execute"}),
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


def build_team_agent(
    ctx: TeamContext,
    model: BaseChatModel,
    preset: ModelPreset,
    governance: Governance,
    checkpointer: Any,
    *,
    team_name: str,
    members: bool = False,
    board: BoardAccess | None = None,
) -> tuple[Any, TeamObserver]:
    """The compiled agent of one team and its observer (the scheduler reads its pause reason)."""
    register_profiles()
    observer = TeamObserver(ctx, preset, governance, provider_key(preset), board=board)
    tools = build_tools(ctx) + (build_board_tools(ctx, board) if board is not None else [])
    agent = create_deep_agent(
        model=model,
        tools=tools,
        system_prompt=SYSTEM_PROMPT.format(
            team_name=team_name, operator=ctx.workspace.operator.operator.display_name
        ),
        middleware=[TodoListMiddleware(), observer],
        subagents=MEMBERS if members else None,
        skills=[f"/{SKILLS_DIR}/"],
        permissions=[
            FilesystemPermission(operations=["write"], paths=FORBIDDEN_WRITES, mode="deny")
        ],
        backend=WorkspaceBackend(ctx.workspace),
        checkpointer=checkpointer,
        name=ctx.team_id,
    )
    return agent, observer
