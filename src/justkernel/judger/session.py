"""The Judger of one run, assembled from the lab runtime: the scheduler's board and frozen
candidates, the judge client, the shared settings file, and the model reviewer of the preset
the settings name (built on first use, one per preset)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from justkernel.core.events.collab import JudgerModelReview
from justkernel.evaluation.protocol import EvaluationClient
from justkernel.judger.judger import Judger
from justkernel.judger.model_review import ModelReviewer, merge_reviews
from justkernel.judger.review import Review
from justkernel.lab import Lab
from justkernel.operators import OperatorDefinition
from justkernel.settings.models import ModelPreset

if TYPE_CHECKING:
    from justkernel.runtime import LabRuntime


class PresetReviews:
    """`Judger.model_review` for named presets: asks the preset's model, logs what it said
    (with the tokens the provider reported) as `judger.model_review`, merges the verdicts."""

    def __init__(
        self, lab: Lab, run_id: str, operator: OperatorDefinition, presets: dict[str, ModelPreset]
    ) -> None:
        self._lab = lab
        self._run_id = run_id
        self._operator = operator
        self._presets = presets
        self._reviewers: dict[str, ModelReviewer] = {}

    def _reviewer(self, name: str) -> ModelReviewer:
        if name not in self._reviewers:
            preset = self._presets.get(name)
            if preset is None:
                raise LookupError(f"unknown model preset {name!r}")
            if preset.provider == "offline":
                raise LookupError(f"{name!r} is the offline playbook; it cannot review code")
            self._reviewers[name] = ModelReviewer.from_preset(preset, self._lab.secrets)
        return self._reviewers[name]

    async def __call__(self, name: str, files: dict[str, bytes], rules: Review) -> Review:
        verdict = await self._reviewer(name).review(files, self._operator)
        await self._lab.events.append(self._run_id, JudgerModelReview(**verdict.to_dict()))
        return merge_reviews(rules, verdict)


def build_judger(runtime: LabRuntime, scheduler: Any, client: EvaluationClient) -> Judger:
    settings = runtime.judger_settings
    reviews = PresetReviews(runtime.lab, scheduler.run_id, runtime.operator, runtime.presets)
    return Judger(
        runtime.lab,
        scheduler.run_id,
        runtime.operator,
        scheduler.candidates,
        scheduler.board,
        client,
        settings.load(),
        settings_file=settings,
        model_review=reviews,
    )
