"""The task the dashboard starts: single main team or multi-team, which model per team and per
member, time limit, worker slots, the run's target (toolchain; empty: the lab's default,
`JUSTKERNEL_TOOLCHAIN`) and how its teams are supervised (approval mode; each team's own mode
can be changed once the run is up). Kept as JSON in the data folder so a reload shows it."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from justkernel.core.approvals import DEFAULT_MODE, ApprovalMode
from justkernel.core.targets import ToolchainId
from justkernel.store.files import JsonModelFile
from justkernel.web.forms import FormErrors, Problem, parse_model

MAX_TEAMS = 100  # the registry's limit per run


class TeamPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(default="offline", min_length=1, max_length=64)
    members: dict[Literal["analyst", "developer", "reviewer"], str] = Field(default_factory=dict)


class TaskSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="dashboard run", min_length=1, max_length=200)
    mode: Literal["single", "multi"] = "single"
    teams: list[TeamPlan] = Field(default_factory=lambda: [TeamPlan()], min_length=1)
    members: bool = False
    minutes: float | None = Field(default=None, gt=0, le=7 * 24 * 60)
    slots: int | None = Field(default=None, ge=1, le=8)
    model_calls: int = Field(default=4, ge=1, le=64)
    toolchain: ToolchainId | None = None  # None: the lab's default target
    approval_mode: ApprovalMode = DEFAULT_MODE  # the run's default, before any team acts


def validate_task(data: Any, presets: set[str]) -> TaskSettings:
    """The settings, or FormErrors naming each bad field (`teams.0.model`, ...)."""
    task = parse_model(TaskSettings, data)
    errors: dict[str, Problem] = {}
    if task.mode == "single" and len(task.teams) != 1:
        errors["teams"] = Problem("single_one_team", "single main team mode runs exactly one team")
    if len(task.teams) > MAX_TEAMS:
        errors["teams"] = Problem("too_many", f"at most {MAX_TEAMS} teams", {"max": MAX_TEAMS})
    errors.update(preset_errors(task, presets))
    if errors:
        raise FormErrors(errors)
    return task


def _unknown(name: str) -> Problem:
    return Problem("unknown_preset", f"unknown model preset {name!r}", {"name": name})


def preset_errors(task: TaskSettings, presets: Collection[str]) -> dict[str, Problem]:
    """Each team field naming a preset not in `presets` (`teams.0.model`, ...): checked when
    the form is sent and again at start, as a preset may be deleted in between."""
    errors: dict[str, Problem] = {}
    for index, team in enumerate(task.teams):
        if team.model not in presets:
            errors[f"teams.{index}.model"] = _unknown(team.model)
        for role, model in team.members.items():
            if model not in presets:
                errors[f"teams.{index}.members.{role}"] = _unknown(model)
    return errors


class TaskStore(JsonModelFile[TaskSettings]):
    """`DATA_DIR/dashboard/task.json`, replaced atomically."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir / "dashboard" / "task.json", TaskSettings)
