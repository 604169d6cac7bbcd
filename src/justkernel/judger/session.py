"""The Judger of one run, assembled from the parts the composition root (`app.LabRuntime`)
hands over: the scheduler's board and frozen candidates, the judge client, the shared
settings file, and the model reviewer of the preset the settings name (built on first use,
one per preset). It takes parts, not the runtime, so the judger never imports the app."""

from __future__ import annotations

from typing import Protocol

from justkernel.a2a.board import LabBoard
from justkernel.core.events.collab import JudgerModelReview
from justkernel.evaluation.protocol import EvaluationClient
from justkernel.judger.judger import Judger
from justkernel.judger.model_review import ModelReviewer, merge_reviews
from justkernel.judger.review import Review
from justkernel.judger.settings import JudgerSettingsFile
from justkernel.lab import Lab
from justkernel.operators import OperatorDefinition
from justkernel.settings.models import ModelPreset
from justkernel.store.candidates import CandidateStore


class JudgedRun(Protocol):
    """What the Judger takes from the run's scheduler: its id, board and candidates."""

    @property
    def run_id(self) -> str: ...

    @property
    def board(self) -> LabBoard: ...

    @property
    def candidates(self) -> CandidateStore: ...


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


def build_judger(
    lab: Lab,
    operator: OperatorDefinition,
    presets: dict[str, ModelPreset],
    settings: JudgerSettingsFile,
    run: JudgedRun,
    client: EvaluationClient,
) -> Judger:
    reviews = PresetReviews(lab, run.run_id, operator, presets)
    return Judger(
        lab,
        run.run_id,
        operator,
        run.candidates,
        run.board,
        client,
        settings.load(),
        settings_file=settings,
        model_review=reviews,
    )
