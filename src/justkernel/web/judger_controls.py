"""The Judger's dashboard controls until the Judger binds its own: settings in
`DATA_DIR/dashboard/judger.json`, human decisions as `judger.approval` events.

A decision is accepted only for a candidate whose latest nomination awaits approval and that
has no decision yet, so a double click or a stale page cannot approve twice.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from justkernel.lab import Lab
from justkernel.web.forms import Conflict, FormErrors, parse_model
from justkernel.web.views import RunViews

MAX_DAILY_QUOTA = 50  # the contest's limit per day (DESIGN.md §4)


class JudgerSettings(BaseModel):
    """The names and values of `judger.judger.JudgerConfig`, plus the reviewer model."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(default="rules", min_length=1, max_length=64)  # "rules" or a preset
    quota_per_day: int = Field(default=MAX_DAILY_QUOTA, ge=0, le=MAX_DAILY_QUOTA)
    margin: float = Field(default=0.01, ge=0, lt=1)  # a challenger must beat the champion by
    strategy: Literal["verified", "official-driven"] = "verified"
    human_approval: bool = False


class FileJudgerControls:
    def __init__(self, lab: Lab, views: RunViews, presets: Any = None) -> None:
        self.path = lab.settings.resolved_data_dir / "dashboard" / "judger.json"
        self._lab = lab
        self._views = views
        self._presets = presets  # callable returning the known preset names

    def settings(self) -> dict[str, Any]:
        try:
            stored = JudgerSettings.model_validate_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = JudgerSettings()
        return stored.model_dump()

    def update(self, values: dict[str, Any]) -> dict[str, Any]:
        settings = parse_model(JudgerSettings, {**self.settings(), **values})
        known = self._presets() if self._presets is not None else None
        if settings.model != "rules" and known is not None and settings.model not in known:
            raise FormErrors({"model": f"unknown model preset {settings.model!r}"})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(settings.model_dump(), indent=1), encoding="utf-8")
        os.replace(tmp, self.path)
        return settings.model_dump()

    async def _decide(self, run_id: str, candidate_id: str, decision: str, by: str) -> Any:
        state = await self._views.state(await self._lab.runs.get(run_id))
        candidate = state.candidates.get(candidate_id)
        if candidate is None:
            raise FormErrors({"candidate_id": f"no candidate {candidate_id!r} in this run"})
        nomination = candidate.get("nomination")
        if not nomination or not nomination.get("awaiting_approval"):
            raise Conflict(f"candidate {candidate_id} is not awaiting approval")
        if any(a["seq"] > nomination["seq"] for a in candidate["approvals"]):
            raise Conflict(f"candidate {candidate_id} was already decided")
        event = await self._lab.events.append(
            run_id,
            "judger.approval",
            {"candidate_id": candidate_id, "decision": decision, "by": by},
            dedup_key=f"judger.approval:{candidate_id}",  # the Judger's own key: one decision
        )
        return event.to_dict()

    async def approve(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]:
        return await self._decide(run_id, candidate_id, "approved", by)

    async def reject(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]:
        return await self._decide(run_id, candidate_id, "rejected", by)
