"""The Judger's dashboard controls, bound to the Judger itself: settings are the shared
`DATA_DIR/judger.json` that a running Judger re-reads before every pass, and approve / reject
are `judger.approvals.decide`, which moves the candidate in the database (the Judger submits an
approved one on its next pass) and logs one `judger.approval` event.

A decision is taken only while the candidate awaits approval, with a conditional update, so a
double click, a stale page or a CLI decision racing the dashboard cannot decide twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from justkernel.judger.approvals import DecisionRefused, decide
from justkernel.judger.settings import (
    JudgerSettings,
    JudgerSettingsError,
    JudgerSettingsFile,
    model_problem,
)
from justkernel.lab import Lab
from justkernel.settings.models import ModelPreset
from justkernel.web.forms import Conflict, FormErrors, parse_model


class LabJudgerControls:
    def __init__(
        self, lab: Lab, presets: Callable[[], Mapping[str, ModelPreset]] | None = None
    ) -> None:
        self._lab = lab
        self._file = JudgerSettingsFile(lab.settings.resolved_data_dir)
        self._presets = presets  # the model presets known now (the dashboard may add some)
        self._candidates = lab.candidates

    def settings(self) -> dict[str, Any]:
        try:
            return self._file.load().model_dump()
        except JudgerSettingsError as exc:
            raise Conflict(f"the Judger's settings file is invalid: {exc}") from None

    def update(self, values: dict[str, Any]) -> dict[str, Any]:
        try:
            current = self._file.load().model_dump()
        except JudgerSettingsError:
            current = {}  # a broken file is replaced by a valid form, never merged into
        settings = parse_model(JudgerSettings, {**current, **values})
        if self._presets is not None:
            problem = model_problem(settings.model, self._presets())
            if problem:
                raise FormErrors({"model": problem})
        return self._file.save(settings).model_dump()

    async def _decide(self, run_id: str, candidate_id: str, decision: str, by: str) -> Any:
        try:
            await self._candidates.get(run_id, candidate_id)
        except LookupError:
            missing = f"no candidate {candidate_id!r} in this run"
            raise FormErrors({"candidate_id": missing}) from None
        try:
            return await decide(self._lab, self._candidates, run_id, candidate_id, decision, by)
        except DecisionRefused as exc:
            raise Conflict(str(exc)) from None

    async def approve(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]:
        return await self._decide(run_id, candidate_id, "approved", by)

    async def reject(self, run_id: str, candidate_id: str, by: str) -> dict[str, Any]:
        return await self._decide(run_id, candidate_id, "rejected", by)
