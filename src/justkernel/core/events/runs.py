"""Payloads of runs, teams, providers and the watchdog (the scheduler's and the CLI's events)."""

from __future__ import annotations

from typing import Any, ClassVar

from justkernel.core.events.base import EventPayload, Number, PayloadPart, described
from justkernel.core.reasons import ParamValue


def _code() -> Any:
    return described("the reason's code (see Reason codes below); absent in older logs")


def _params() -> Any:
    return described("the code's values, by name")


class _RunArea(EventPayload):
    AREA: ClassVar[str] = "Runs and teams"


class _TeamArea(_RunArea):
    TEAM: ClassVar[str] = "id"


class DispatchStarted(_RunArea):
    """The scheduler started handing out turns."""

    KIND: ClassVar[str] = "run.dispatch_started"
    seconds: Number | None = described("time limit, or null for none")


class DispatchStopped(_RunArea):
    """The scheduler stopped handing out turns."""

    KIND: ClassVar[str] = "run.dispatch_stopped"
    reason: str | None = described(
        'in English: "time limit reached", "stopped", "no team has work left", "budget: …"'
    )
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


class ToolchainPreparing(_RunArea):
    """The run's toolchain builds what every job shares (the ascendc-cpu harness main and
    precompiled headers), beside the run rather than in its first job; once per machine."""

    KIND: ClassVar[str] = "run.toolchain_preparing"
    toolchain: str | None = described("the run's target, e.g. ascendc-cpu")
    detail: str | None = described('"preparing the ascendc-cpu toolchain (one-time build)"')


class TeamFigures(PayloadPart):
    team_id: str | None = None
    display_name: str | None = None
    status: str | None = None
    status_reason: str | None = None
    best_cycles: int | None = None
    best_receipt: str | None = None
    best_commit: str | None = None
    experiments: int | None = None
    model_calls: int | None = None
    tokens: int | None = None
    cost_usd: Number | None = None
    tokens_estimated: bool | None = None


class ProviderFigures(PayloadPart):
    calls: int | None = None
    tokens: int | None = None
    cost_usd: Number | None = None


class JudgerFigures(PayloadPart):
    frozen: int | None = None
    submitted: int | None = None
    official_results: int | None = None
    official_passes: int | None = None
    best_prof_sum_us: Number | None = described("null until an official pass")


class RunSummary(_RunArea):
    """The run's figures when it ended (written by `justkernel run` and the dashboard)."""

    KIND: ClassVar[str] = "run.summary"
    reason: str | None = described("why the run ended, as in `run.dispatch_stopped`")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()
    teams: list[TeamFigures] | None = described("per team")
    providers: dict[str, ProviderFigures] | None = described("per provider")
    judger: JudgerFigures | None = described("the Judger's progress")


class TeamRegistered(_TeamArea):
    """A team joined the run (a lab team, or an outside team over A2A)."""

    KIND: ClassVar[str] = "team.registered"
    display_name: str | None = described("")
    model_preset: str | None = described("")
    provider: str | None = described("")
    offline: bool | None = described("true for the scripted offline playbook")
    baseline_commit: str | None = described("the workspace's first commit; null for A2A teams")
    config: dict[str, Any] | None = described("the team's settings")


class TeamTurn(_TeamArea):
    """A team's turn began."""

    KIND: ClassVar[str] = "team.turn"
    state: str | None = described("`started`, or `resumed` from a checkpoint after a crash")


class TeamTurnEnd(_TeamArea):
    """A team's turn ended."""

    KIND: ClassVar[str] = "team.turn_end"
    status: str | None = described("idle, done, paused, awaiting_approval")
    detail: str | None = described("why, when it was not a plain end")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


class TeamTurnTimeout(_TeamArea):
    """A team's turn ran over its time and was cut short."""

    KIND: ClassVar[str] = "team.turn_timeout"


class TeamPaused(_TeamArea):
    """A team was paused (budget, stall watchdog, a paused provider, a person)."""

    KIND: ClassVar[str] = "team.paused"
    reason: str | None = described("")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


class TeamResumed(_TeamArea):
    """A paused team may take turns again."""

    KIND: ClassVar[str] = "team.resumed"
    reason: str | None = described("usually absent")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


class TeamExited(_TeamArea):
    """A team left the run for good."""

    KIND: ClassVar[str] = "team.exited"
    reason: str | None = described("")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


class ProviderPaused(_RunArea):
    """Dispatch to one connection (a model preset: its base URL and key) stopped until it is
    fixed; other connections of the same provider type go on."""

    KIND: ClassVar[str] = "provider.paused"
    provider: str | None = described("the provider type (`openai_compatible`, `deepseek`, …)")
    connection: str | None = described(
        "the paused connection: the model preset's name (absent in older runs, which paused "
        "the provider type)"
    )
    kind: str | None = described("auth, balance, config")
    reason: str | None = described("the classified provider error")


class ProviderResumeRequested(_RunArea):
    """A person asked, from another process (`justkernel resume-provider`), to resume a paused
    provider; the scheduler driving the run answers on its next dispatch pass (or, when no
    process drives the run, when it is next driven) with `provider.resumed`."""

    KIND: ClassVar[str] = "provider.resume_requested"
    provider: str | None = described("the connection to resume (older requests: a provider type)")
    connection: str | None = described("the connection to resume: a model preset's name")
    by: str | None = described('who asked: "cli"')


class ProviderResumed(_RunArea):
    """Dispatch to a paused provider started again."""

    KIND: ClassVar[str] = "provider.resumed"
    provider: str | None = described("the resumed connection (older runs: a provider type)")
    connection: str | None = described("the resumed connection: a model preset's name")
    request_seq: int | None = described(
        "the seq of the `provider.resume_requested` this answers; absent when resumed directly"
    )
    teams: list[str] | None = described("the teams that were paused for it, resumed with it")


class WatchdogNudge(_TeamArea):
    """The stall watchdog told a team that made no progress to move on."""

    KIND: ClassVar[str] = "watchdog.nudge"
    message: str | None = described("what the team was told")
    reason_code: str | None = _code()
    reason_params: dict[str, ParamValue] | None = _params()


# the field that holds a kind's reason in English (the one `core.reasons.parse` reads when an
# older event has no `reason_code`)
REASON_TEXT_FIELDS: dict[str, str] = {
    DispatchStopped.KIND: "reason",
    RunSummary.KIND: "reason",
    TeamTurnEnd.KIND: "detail",
    TeamPaused.KIND: "reason",
    TeamResumed.KIND: "reason",
    TeamExited.KIND: "reason",
    WatchdogNudge.KIND: "message",
}
