"""Outside agents as teams: joining a run over A2A, and tokens for existing teams.

An external team is a registry row like any other (number, display name, sharing policy, board
deliveries, frozen candidates) with `model_preset="external"` and `config["external"] = True`.
It has no agent harness and no workspace: its agent lives elsewhere and reaches the lab only
through the A2A endpoint, so the scheduler must never dispatch it (`is_external`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from justkernel.a2a.policies import DEFAULT_POLICY, POLICIES, SharingPolicy
from justkernel.core.events.runs import TeamRegistered
from justkernel.lab import Lab
from justkernel.store.teams import Team, UnknownTeam

EXTERNAL_PRESET = "external"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$")


class JoinError(ValueError):
    """A join or token request the lab refuses; the message is safe to print."""


def is_external(team: Team) -> bool:
    """True for a team whose agent is outside the lab: never dispatched by the scheduler."""
    return bool(team.config.get("external"))


def team_path(team_id: str) -> str:
    """Where a team's A2A endpoint lives in the lab app (its card is below it)."""
    return f"/a2a/teams/{team_id}/"


@dataclass(frozen=True)
class Joined:
    team: Team
    token: str  # shown once; only its SHA-256 is kept


async def join_external(
    lab: Lab, run_id: str, name: str, *, sharing: SharingPolicy = DEFAULT_POLICY
) -> Joined:
    """Register an outside agent as a new team of `run_id` and issue its token."""
    if not NAME_RE.match(name):
        raise JoinError(
            "a team name is 1-40 letters, digits, spaces, '.', '_' or '-', starting with a "
            "letter or digit"
        )
    if sharing not in POLICIES:
        raise JoinError(f"unknown sharing policy {sharing!r} (one of {', '.join(POLICIES)})")
    run = await lab.runs.get(run_id)
    if run.read_only or run.mode != "live":
        raise JoinError(f"run {run_id} is a {run.mode} run; only live runs take new teams")
    config: dict[str, Any] = {"external": True, "sharing": sharing}
    team = await lab.teams.register(
        run_id,
        model_preset=EXTERNAL_PRESET,
        model_label=name,
        workspaces_dir=lab.settings.workspaces_dir,
        config=config,
    )
    await lab.events.append(
        run_id,
        TeamRegistered(
            display_name=team.display_name,
            model_preset=EXTERNAL_PRESET,
            provider=EXTERNAL_PRESET,
            offline=False,
            baseline_commit=None,
            config=team.config,
        ),
        team=team.id,
    )
    token = await lab.tokens.issue(run_id, team.id)
    return Joined(team, token)


async def issue_token(lab: Lab, run_id: str, team_id: str) -> str:
    """A new token for an existing team (its earlier tokens stop working)."""
    try:
        team = await lab.teams.get(run_id, team_id)
    except UnknownTeam:
        raise JoinError(f"run {run_id} has no team {team_id}") from None
    if team.status == "exited":
        raise JoinError(f"team {team_id} has left run {run_id}")
    return await lab.tokens.issue(run_id, team_id)
