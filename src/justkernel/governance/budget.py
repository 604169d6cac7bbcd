"""The budget governor: token and cost caps per team and for the whole run.

Before a model call the caller reserves its estimated cost; the reservation counts against the
caps until the provider reports the real usage. So a cap is never crossed by calls that were
already in flight when it was reached. Unpriced models count tokens only (cost stays unknown,
never 0).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from justkernel.core.reasons import Reason, ReasonCode


class BudgetExceeded(RuntimeError):
    """Dispatching this call could cross a cap; `scope` is "team" or "run"."""

    def __init__(self, scope: str, reason: Reason) -> None:
        super().__init__(reason.text())
        self.scope = scope
        self.reason = reason


@dataclass(frozen=True)
class BudgetCaps:
    team_tokens: int | None = None
    team_cost_usd: float | None = None
    run_tokens: int | None = None
    run_cost_usd: float | None = None


@dataclass
class Spend:
    tokens: int = 0
    cost_usd: float = 0.0
    priced_calls: int = 0
    unpriced_calls: int = 0


@dataclass
class Reservation:
    id: int
    team: str
    provider: str
    tokens: int
    cost_usd: float | None


@dataclass
class BudgetGovernor:
    caps: BudgetCaps = field(default_factory=BudgetCaps)
    teams: dict[str, Spend] = field(default_factory=dict)
    providers: dict[str, Spend] = field(default_factory=dict)
    run: Spend = field(default_factory=Spend)
    _open: dict[int, Reservation] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=itertools.count)

    def _reserved(self, team: str | None = None) -> tuple[int, float]:
        held = [r for r in self._open.values() if team is None or r.team == team]
        return sum(r.tokens for r in held), sum(r.cost_usd or 0.0 for r in held)

    def reserve(self, team: str, provider: str, tokens: int, cost_usd: float | None) -> Reservation:
        """Hold an estimate, or raise `BudgetExceeded` if it could cross a cap."""
        team_spend = self.teams.setdefault(team, Spend())
        team_tokens, team_cost = self._reserved(team)
        run_tokens, run_cost = self._reserved()
        cost = cost_usd or 0.0
        checks = [
            ("team", self.caps.team_tokens, team_spend.tokens + team_tokens + tokens, "tokens"),
            ("team", self.caps.team_cost_usd, team_spend.cost_usd + team_cost + cost, "USD"),
            ("run", self.caps.run_tokens, self.run.tokens + run_tokens + tokens, "tokens"),
            ("run", self.caps.run_cost_usd, self.run.cost_usd + run_cost + cost, "USD"),
        ]
        for scope, cap, would_be, unit in checks:
            if cap is not None and would_be > cap:
                raise BudgetExceeded(scope, _cap_reason(scope, team, cap, unit))
        reservation = Reservation(next(self._ids), team, provider, tokens, cost_usd)
        self._open[reservation.id] = reservation
        return reservation

    def settle(self, reservation: Reservation, tokens: int | None, cost_usd: float | None) -> None:
        """Replace the estimate by what the provider reported (or drop it on failure)."""
        self._open.pop(reservation.id, None)
        if tokens is None:
            return
        for spend in (
            self.teams.setdefault(reservation.team, Spend()),
            self.providers.setdefault(reservation.provider, Spend()),
            self.run,
        ):
            spend.tokens += tokens
            if cost_usd is None:
                spend.unpriced_calls += 1
            else:
                spend.cost_usd += cost_usd
                spend.priced_calls += 1

    @property
    def in_flight(self) -> int:
        return len(self._open)


def _cap_reason(scope: str, team: str, cap: float, unit: str) -> Reason:
    value = float(cap)
    if scope == "team":
        return Reason.of(ReasonCode.TEAM_CAP, team=team, cap=value, unit=unit)
    return Reason.of(ReasonCode.RUN_CAP, cap=value, unit=unit)
