"""Per-team figures of a run, folded from the event log and the notebook: status, best cycles
(with the receipt behind them), experiments, model calls, tokens and spend; and the Judger's
progress: candidates frozen, submissions, official results and the best official pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from justkernel.core.events import EventPayload
from justkernel.core.events.agents import ModelResponse, Usage
from justkernel.core.events.collab import CandidateFrozen, JudgerSubmission, OfficialResult
from justkernel.events import Event, EventLog
from justkernel.store.experiments import ExperimentBook
from justkernel.store.teams import TeamRegistry

P = TypeVar("P", bound=EventPayload)


def _typed(model: type[P], event: Event) -> P | None:
    """The payload through its model; None for a malformed one (it counts as empty)."""
    try:
        return model.model_validate(event.payload)
    except ValidationError:
        return None


@dataclass
class TeamFigures:
    team_id: str
    display_name: str = ""
    status: str = ""
    status_reason: str | None = None
    best_cycles: int | None = None
    best_receipt: str | None = None
    best_commit: str | None = None
    experiments: int = 0
    model_calls: int = 0
    tokens: int = 0
    cost_usd: float | None = None  # None until a priced call is seen
    tokens_estimated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class JudgerFigures:
    frozen: int = 0
    submitted: int = 0
    official_results: int = 0
    official_passes: int = 0
    best_prof_sum_us: float | None = None  # the best official pass; None until there is one

    def feed(self, event: Event) -> None:
        if event.kind == CandidateFrozen.KIND:
            self.frozen += 1
        elif event.kind == JudgerSubmission.KIND:
            self.submitted += 1
        elif event.kind == OfficialResult.KIND:
            self.official_results += 1
            result = _typed(OfficialResult, event)
            if result is None or result.status != "official_pass":
                return
            self.official_passes += 1
            prof = result.prof_sum_us
            best = self.best_prof_sum_us
            if prof is not None and (best is None or prof < best):
                self.best_prof_sum_us = prof

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self) -> str:
        best = f"{self.best_prof_sum_us:,.1f} µs" if self.best_prof_sum_us is not None else "—"
        return (
            f"Judger: {self.frozen} frozen, {self.submitted} submitted, "
            f"{self.official_results} official results ({self.official_passes} passed), "
            f"best official {best}"
        )


@dataclass
class RunFigures:
    """Folds events incrementally: call `feed` with new events, `refresh` for DB fields."""

    run_id: str
    teams: dict[str, TeamFigures] = field(default_factory=dict)
    last_seq: int = 0
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    judger: JudgerFigures = field(default_factory=JudgerFigures)

    def feed(self, event: Event) -> None:
        self.last_seq = max(self.last_seq, event.seq)
        self.judger.feed(event)
        if event.team is None or event.kind != ModelResponse.KIND:
            return
        figures = self.teams.setdefault(event.team, TeamFigures(event.team))
        figures.model_calls += 1
        response = _typed(ModelResponse, event) or ModelResponse()
        usage = response.usage or Usage()
        figures.tokens += usage.total or 0
        figures.tokens_estimated |= bool(response.usage_estimated)
        provider = self.providers.setdefault(
            response.provider or "?", {"calls": 0, "tokens": 0, "cost_usd": None}
        )
        provider["calls"] += 1
        provider["tokens"] += usage.total or 0
        if usage.cost_usd is not None:
            figures.cost_usd = (figures.cost_usd or 0.0) + usage.cost_usd
            provider["cost_usd"] = (provider["cost_usd"] or 0.0) + usage.cost_usd

    async def catch_up(self, log: EventLog) -> None:
        async for event in log.iter_all(self.run_id, after=self.last_seq):
            self.feed(event)

    async def refresh(self, registry: TeamRegistry, book: ExperimentBook) -> None:
        for team in await registry.list(self.run_id):
            figures = self.teams.setdefault(team.id, TeamFigures(team.id))
            figures.display_name = team.display_name
            figures.status = team.status
            figures.status_reason = team.status_reason
        for figures in self.teams.values():
            figures.experiments = 0
        for experiment in await book.list(self.run_id):
            figures = self.teams.setdefault(experiment.team_id, TeamFigures(experiment.team_id))
            figures.experiments += 1
            cycles = experiment.cycles_sum
            if (
                experiment.status == "measured"
                and cycles is not None
                and (figures.best_cycles is None or cycles < figures.best_cycles)
            ):
                figures.best_cycles = cycles
                figures.best_receipt = experiment.receipt_key
                figures.best_commit = experiment.commit

    def to_dict(self) -> dict[str, Any]:
        return {
            "teams": [t.to_dict() for t in sorted(self.teams.values(), key=lambda t: t.team_id)],
            "providers": self.providers,
            "judger": self.judger.to_dict(),
        }
