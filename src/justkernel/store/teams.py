"""The team registry (table `teams`): up to 100 teams per run, stable ids, display names from
the model; the number and the name are given in the transaction that counts the run's teams.

A team that exits keeps its row, workspace and history; it only stops being dispatched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, update

from justkernel.core.records.teams import Team, TeamStatus
from justkernel.store.database import Database
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import teams

MAX_TEAMS = 100


class TeamLimitReached(ValueError):
    """A run already has the maximum number of teams."""


class UnknownTeam(LookupError):
    """No team with that id in that run."""


class TeamRegistry:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def register(
        self,
        run_id: str,
        *,
        model_preset: str,
        model_label: str,
        workspaces_dir: Path,
        config: dict[str, Any] | None = None,
    ) -> Team:
        """Add a team with the next number; its name is the model's label and that number."""
        async with self._db.writer.begin() as conn:
            count = (
                await conn.execute(
                    select(func.count()).select_from(teams).where(teams.c.run_id == run_id)
                )
            ).scalar_one()
            if count >= MAX_TEAMS:
                raise TeamLimitReached(f"run {run_id} already has {MAX_TEAMS} teams")
            number = count + 1
            team = Team(
                run_id=run_id,
                id=f"team-{number:03d}",
                number=number,
                display_name=f"{model_label}-{number:03d}",
                model_preset=model_preset,
                status="idle",
                status_reason=None,
                workspace=workspaces_dir / run_id / f"team-{number:03d}",
                created_at=utc_now_iso(),
                exited_at=None,
                config=config or {},
            )
            await conn.execute(
                insert(teams).values(
                    run_id=run_id,
                    id=team.id,
                    number=number,
                    display_name=team.display_name,
                    model_preset=model_preset,
                    status=team.status,
                    status_reason=None,
                    workspace=str(team.workspace),
                    created_at=team.created_at,
                    exited_at=None,
                    config=team.config,
                )
            )
        return team

    async def list(self, run_id: str, *, include_exited: bool = True) -> list[Team]:
        query = select(teams).where(teams.c.run_id == run_id).order_by(teams.c.number)
        if not include_exited:
            query = query.where(teams.c.status != "exited")
        return await self._db.records(Team, query)

    async def using_preset(self, preset: str) -> list[Team]:
        """The teams of every run, not exited, whose model or a member's model is `preset`
        (deleting it would leave them without a model when their run goes on)."""
        query = select(teams).where(teams.c.status != "exited")
        query = query.order_by(teams.c.run_id, teams.c.number)
        return [t for t in await self._db.records(Team, query) if preset in _presets_of(t)]

    async def exists(self, team_id: str) -> bool:
        """Whether any run has a team of that id (a public agent card needs no more)."""
        query = select(teams.c.id).where(teams.c.id == team_id).limit(1)
        return await self._db.fetch_one(query) is not None

    async def get(self, run_id: str, team_id: str) -> Team:
        found = await self._db.record(
            Team, select(teams).where(teams.c.run_id == run_id, teams.c.id == team_id)
        )
        if found is None:
            raise UnknownTeam(f"{run_id}/{team_id}")
        return found

    async def set_status(
        self, run_id: str, team_id: str, status: TeamStatus, reason: str | None = None
    ) -> None:
        values: dict[str, Any] = {"status": status, "status_reason": reason}
        if status == "exited":
            values["exited_at"] = utc_now_iso()
        result = await self._db.write(
            update(teams).where(teams.c.run_id == run_id, teams.c.id == team_id).values(values)
        )
        if result.rowcount == 0:
            raise UnknownTeam(f"{run_id}/{team_id}")


def _presets_of(team: Team) -> set[str]:
    members = team.config.get("member_models")
    named = members.values() if isinstance(members, dict) else ()
    return {team.model_preset, *(m for m in named if isinstance(m, str))}
