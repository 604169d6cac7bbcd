"""Why a team or a run paused, stopped, failed or ended, as a code with its values.

The one owner of reason codes: every code has its values and its English template here, and
the code that pauses, stops or fails a team or a run builds a `Reason`, never a sentence. The
event log keeps the English text too (old readers, old bundles), next to `reason_code` and
`reason_params`; the dashboard and the reports translate the code, so a Chinese page never
shows the scheduler's English.

Logs written before the codes existed hold only the English sentence: `parse` reads it back
into its code (the one tolerant parser; nothing else matches reason sentences).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

ParamValue = str | int | float


class ReasonCode(StrEnum):
    """Every reason the lab writes. A member compares equal to its code's text."""

    NO_WORK = "no_work"
    STOPPED = "stopped"
    TIME_LIMIT = "time_limit"
    FAILED = "failed"
    NOTHING_LEFT = "nothing_left"
    REMOVED = "removed"
    PAUSED = "paused"
    WATCHDOG = "watchdog"
    WATCHDOG_NUDGE = "watchdog_nudge"
    TURN_TIMEOUT = "turn_timeout"
    TURN_FAILED = "turn_failed"
    PROVIDER_PAUSED = "provider_paused"
    RUN_CAP = "run_cap"
    TEAM_CAP = "team_cap"
    AGENT_UNBUILT = "agent_unbuilt"
    NEW_MESSAGES = "new_messages"
    RECOVERED = "recovered"
    INTERRUPTED = "interrupted"
    AWAITING_APPROVAL = "awaiting_approval"


# how each kind of value reads inside a sentence (for `parse`)
_VALUE_PATTERNS = {
    "text": r"[\s\S]*?",  # free words (an error's message): never translated
    "id": r"\S+?",  # a team id, a connection (a preset's name)
    "word": r"[\w.-]+",  # a code the page translates (an error kind, a unit)
    "number": r"[-+\d.eE]+|inf",
    "names": r"[^()]*?",  # names joined by ", " (tool names, card ids)
}


@dataclass(frozen=True)
class ReasonSpec:
    """One code's English template (`{name}` per value) and what kind each value is."""

    template: str
    params: tuple[tuple[str, str], ...] = ()
    # older spellings of the same reason, read by `parse` only (same values)
    older: tuple[str, ...] = ()
    # values a newer writer adds that the English leaves out (so `parse` cannot know them)
    optional: tuple[tuple[str, str], ...] = ()

    def pattern(self, template: str) -> re.Pattern[str]:
        kinds = dict(self.params)
        parts = re.split(r"\{(\w+)\}", template)
        out = []
        for i, part in enumerate(parts):
            out.append(f"(?P<{part}>{_VALUE_PATTERNS[kinds[part]]})" if i % 2 else re.escape(part))
        return re.compile("".join(out))


_NUDGE_TEXT = (
    "Watchdog: no progress for a while (no source change and no new experiment). "
    "Record an experiment plan and change the kernel, or simulate, instead of reading more."
)
_CAP = "would exceed its cap of {cap} {unit} with this call"

SPECS: dict[ReasonCode, ReasonSpec] = {
    ReasonCode.NO_WORK: ReasonSpec("no team has work left"),
    ReasonCode.STOPPED: ReasonSpec("stopped"),
    ReasonCode.TIME_LIMIT: ReasonSpec("time limit reached"),
    ReasonCode.FAILED: ReasonSpec("failed"),
    ReasonCode.NOTHING_LEFT: ReasonSpec("the team has nothing left to try"),
    ReasonCode.REMOVED: ReasonSpec("removed from the dashboard"),
    ReasonCode.PAUSED: ReasonSpec("paused"),
    ReasonCode.WATCHDOG: ReasonSpec("no progress: paused by the stall watchdog"),
    ReasonCode.WATCHDOG_NUDGE: ReasonSpec(_NUDGE_TEXT),
    ReasonCode.TURN_TIMEOUT: ReasonSpec(
        "turn timed out after {seconds} s", (("seconds", "number"),)
    ),
    ReasonCode.TURN_FAILED: ReasonSpec(
        "turn failed ({kind}): {message}; retry in {seconds} s",
        (("kind", "word"), ("message", "text"), ("seconds", "number")),
        older=("turn failed ({kind}): {message}",),
    ),
    ReasonCode.PROVIDER_PAUSED: ReasonSpec(
        "provider {connection} paused: {message}",
        (("connection", "text"), ("message", "text")),
        optional=(("kind", "word"),),  # auth, balance, config
    ),
    ReasonCode.RUN_CAP: ReasonSpec(
        "budget: the run " + _CAP,
        (("cap", "number"), ("unit", "word")),
        older=("the run " + _CAP,),
    ),
    ReasonCode.TEAM_CAP: ReasonSpec(
        "budget: team {team} " + _CAP,
        (("team", "id"), ("cap", "number"), ("unit", "word")),
        older=("team {team} " + _CAP,),
    ),
    ReasonCode.AGENT_UNBUILT: ReasonSpec(
        "the team's agent cannot be built: {error}", (("error", "text"),)
    ),
    ReasonCode.NEW_MESSAGES: ReasonSpec("new messages"),
    ReasonCode.RECOVERED: ReasonSpec("recovered"),
    ReasonCode.INTERRUPTED: ReasonSpec("interrupted"),
    ReasonCode.AWAITING_APPROVAL: ReasonSpec(
        "waiting for a person to approve {tools} ({ids})", (("tools", "names"), ("ids", "names"))
    ),
}


def _show(value: ParamValue) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class Reason(BaseModel):
    """A reason as the lab writes it: a code and its values; `text()` is the English."""

    model_config = ConfigDict(frozen=True)

    code: ReasonCode
    params: dict[str, ParamValue] = {}

    @classmethod
    def of(cls, code: ReasonCode, **params: ParamValue) -> Reason:
        return cls(code=code, params=params)

    def text(self) -> str:
        spec = SPECS[self.code]
        return spec.template.format(
            **{name: _show(self.params.get(name, "?")) for name, _ in spec.params}
        )

    def __str__(self) -> str:  # a report cell, a log line
        return self.text()

    def fields(self) -> dict[str, Any]:
        """The event fields that carry it: the English text, the code and the values."""
        return {"reason": self.text(), "reason_code": self.code.value, "reason_params": self.params}

    def view(self) -> dict[str, Any]:
        """What an API returns for it: `{code, params, text}`."""
        return {"code": self.code.value, "params": dict(self.params), "text": self.text()}


def _typed(kind: str, raw: str) -> ParamValue:
    if kind != "number":
        return raw
    try:
        number = float(raw)
    except ValueError:
        return raw
    return int(number) if number.is_integer() and "." not in raw and "e" not in raw else number


def _compiled() -> list[tuple[ReasonCode, ReasonSpec, re.Pattern[str]]]:
    out = []
    for code, spec in SPECS.items():
        for template in (spec.template, *spec.older):
            out.append((code, spec, spec.pattern(template)))
    return out


_PATTERNS = _compiled()


def parse(text: str | None) -> Reason | None:
    """The reason an English sentence says (an old event's, a stored status reason), or None
    for words no code knows (a model's, a person's) and for nothing."""
    if not text:
        return None
    stripped = text.strip()
    for code, spec, pattern in _PATTERNS:
        found = pattern.fullmatch(stripped)
        if found:
            kinds = dict(spec.params)
            return Reason(
                code=code, params={k: _typed(kinds[k], v) for k, v in found.groupdict().items()}
            )
    if stripped.startswith("Watchdog: no progress for a while"):
        return Reason.of(ReasonCode.WATCHDOG_NUDGE)
    return None


def waits_for(text: str | None) -> str | None:
    """The connection a team's status reason says it waits for (a provider pause), or None."""
    found = parse(text)
    if found is None or found.code != ReasonCode.PROVIDER_PAUSED:
        return None
    return str(found.params.get("connection"))


def reason_of(code: str | None, params: dict[str, Any] | None, text: str | None) -> Reason | None:
    """The reason an event carries: its code and values when it has them (a newer log), else
    what its English text says (an older one). A code this lab does not know reads from text."""
    if code:
        try:
            return Reason(code=ReasonCode(code), params=dict(params or {}))
        except ValueError:
            pass
    return parse(text)


def reason_view(
    code: str | None, params: dict[str, Any] | None, text: str | None
) -> dict[str, Any]:
    """`{"reason_code", "reason_params"}` for an API body: null code for words no code knows."""
    found = reason_of(code, params, text)
    return {
        "reason_code": found.code.value if found else None,
        "reason_params": dict(found.params) if found else None,
    }
