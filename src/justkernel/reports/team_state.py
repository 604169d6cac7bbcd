"""What the fold keeps per team and per evaluation job, and token usage as providers reported
it. A figure that was never reported stays `None` (shown as missing), never 0."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from justkernel.core.events.agents import Usage as ReportedUsage
from justkernel.core.reasons import reason_view

USAGE_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "total")


def _add(current: int | None, value: Any) -> int | None:
    """A provider figure adds up; one never reported stays missing (None), never 0."""
    if value is None:
        return current
    return (current or 0) + int(value)


@dataclass
class Usage:
    """Token usage exactly as providers reported it; `estimated` when any figure was guessed."""

    calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    total: int | None = None
    cost_usd: float | None = None
    estimated: bool = False
    unreported: int = 0  # calls whose provider reported no usage at all

    def add(self, usage: ReportedUsage | None, estimated: bool) -> None:
        self.calls += 1
        if usage is None or not usage.model_fields_set:
            self.unreported += 1
            return
        for name in USAGE_FIELDS:
            setattr(self, name, _add(getattr(self, name), getattr(usage, name)))
        if usage.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + float(usage.cost_usd)
        self.estimated |= estimated

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Job:
    """One evaluation with a receipt (from `experiment.receipt`)."""

    seq: int
    ts: str
    team: str
    experiment: int | None
    receipt_id: str | None
    mode: str | None
    status: str | None
    cache_hit: bool
    cycles: int | None
    executor: dict[str, Any]
    blob: str | None

    def lane(self) -> str:
        host = self.executor.get("host") or "?"
        worker = self.executor.get("worker") or "local"
        slot = self.executor.get("slot")
        return f"{host}/{worker}/{'-' if slot is None else slot}"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "lane": self.lane()}


@dataclass
class TeamState:
    id: str
    display_name: str = ""
    model_preset: str | None = None
    provider: str | None = None
    offline: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    baseline_commit: str | None = None
    status: str = "idle"
    status_reason: str | None = None  # the English words (old readers, the CLI)
    status_reason_code: str | None = None  # as the event carried them (none in older logs)
    status_reason_params: dict[str, Any] | None = None
    running: bool = False
    exited: bool = False
    registered_seq: int | None = None
    last_seq: int = 0
    last_ts: str | None = None
    todos: list[dict[str, Any]] | None = None
    todos_seq: int | None = None
    experiments: dict[int, dict[str, Any]] = field(default_factory=dict)
    baseline_cycles: int | None = None
    best_cycles: int | None = None
    best: dict[str, Any] | None = None  # the receipt behind best_cycles
    series: list[list[Any]] = field(default_factory=list)  # [ts, seq, best] per improvement
    usage: Usage = field(default_factory=Usage)
    source_changes: int = 0
    official: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    external: bool = False  # an outside agent's team (A2A): never dispatched by the scheduler
    last_outside: dict[str, Any] | None = None  # its last message or submission over A2A

    def set_reason(
        self, text: str | None, code: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        self.status_reason, self.status_reason_code, self.status_reason_params = text, code, params

    def summary(self) -> dict[str, Any]:
        """What a team row shows; plans and official history are fetched on their own."""
        best_official = min(
            (
                r["prof_sum_us"]
                for r in self.official
                if r.get("status") == "official_pass" and r.get("prof_sum_us") is not None
            ),
            default=None,
        )
        latest = self.official[-1] if self.official else None
        return {
            "id": self.id,
            "display_name": self.display_name or self.id,
            "model_preset": self.model_preset,
            "provider": self.provider,
            "offline": self.offline,
            "config": self.config,
            "status": self.status,
            "status_reason": self.status_reason,
            **status_reason_view(self),
            "running": self.running,
            "exited": self.exited,
            "last_seq": self.last_seq,
            "last_ts": self.last_ts,
            "experiments": len(self.experiments),
            "baseline_cycles": self.baseline_cycles,
            "best_cycles": self.best_cycles,
            "best": self.best,
            "model_calls": self.usage.calls,
            "tokens": self.usage.total,
            "tokens_estimated": self.usage.estimated,
            "cost_usd": self.usage.cost_usd,
            "source_changes": self.source_changes,
            "best_official_us": best_official,
            "latest_official": _coverage(latest),
            "official_count": len(self.official),
            "candidates": len(self.candidates),
            "external": self.external,
            "last_outside": self.last_outside,
        }


def _coverage(result: dict[str, Any] | None) -> dict[str, Any] | None:
    if result is None:
        return None
    points = result.get("points") or []
    return {
        "submission_id": result.get("submission_id"),
        "status": result.get("status"),
        "passed": sum(1 for p in points if p.get("passed") is True),
        "total": len(points),
        "prof_sum_us": result.get("prof_sum_us"),
        "ts": result.get("ts"),
    }


def status_reason_view(team: TeamState) -> dict[str, Any]:
    """`status_reason_code` and `status_reason_params`: the code the event carried, or for an
    older log the one its words say (null for words no code knows)."""
    view = reason_view(team.status_reason_code, team.status_reason_params, team.status_reason)
    return {
        "status_reason_code": view["reason_code"],
        "status_reason_params": view["reason_params"],
    }
