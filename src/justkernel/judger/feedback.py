"""What a team is told about an official result: the per-point figures the judge gave.

One place builds them, so the Judger's feedback and the tests that check what a team can learn
from it read the same thing. A control team (sharing `none`) measures what sharing is worth, so
the figures that compare with other submissions (each point's best time, whether the state of
the art changed) are computed over the results the recipient may know of: a control team's
own, or those of every team that shares. The judge's own best times span every submission of
the lab's account, so they are never passed on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from justkernel.a2a.policies import DEFAULT_POLICY, SharingPolicy, shares_publicly
from justkernel.core.statuses import SubmissionStatus
from justkernel.evaluation.protocol import OfficialResult

Known = Sequence[tuple[str, Mapping[str, Any]]]  # (team, recorded result) of earlier results


def point_feedback(result: OfficialResult) -> list[dict[str, Any]]:
    """The points of `result` as the submitting team receives them."""
    return [
        {
            "id": p.id,
            "passed": p.passed,
            "error_ratio": p.error_ratio,
            "error_bucket": p.error_bucket,
            "time_us": p.time_us,
            "best_time_us": p.best_time_us,
            "outcome": p.outcome,
        }
        for p in result.points
    ]


def audience(team: str, policies: Mapping[str, SharingPolicy]) -> set[str]:
    """The teams whose results `team` may hear of: a control team only its own, any other
    team those of every team that shares."""
    if not shares_publicly(policies.get(team, DEFAULT_POLICY)):
        return {team}
    return {t for t, policy in policies.items() if shares_publicly(policy)}


def seen_by(data: Mapping[str, Any], earlier: Known, teams: set[str]) -> dict[str, Any]:
    """`data` (a recorded result) as a team that knows only `teams`' earlier results sees it:
    each point's best time among them and this one, and whether it beats their best pass."""
    known = [result for team, result in earlier if team in teams]
    passes = [r["prof_sum_us"] for r in known if r.get("status") == SubmissionStatus.OFFICIAL_PASS]
    best_prof = min((p for p in passes if p is not None), default=None)
    prof = data.get("prof_sum_us")
    best: dict[str, float] = {}
    for result in (*known, data):
        for point in result.get("points") or ():
            t = point.get("time_us")
            if point.get("passed") and t is not None:
                best[point["id"]] = min(best.get(point["id"], t), t)
    return {
        **data,
        "points": [{**p, "best_time_us": best.get(p["id"])} for p in data["points"]],
        "sota_changed": bool(
            data.get("status") == SubmissionStatus.OFFICIAL_PASS
            and prof is not None
            and (best_prof is None or prof < best_prof)
        ),
    }


MAX_DIAGNOSTICS = 30  # lines, as many as the local judge passes on
MAX_LINE = 300  # characters of one diagnostic line
_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")


def failure_of(result: OfficialResult) -> tuple[str | None, list[str]]:
    """Why the judge failed a submission, from its raw answer (untrusted: codes are checked,
    lines are cut): the evaluation's status code (compile_failed, incorrect...; "judge_error"
    when the judge could not evaluate it) and the compiler's first lines. The table and the
    team both need them: a failing point alone says only "fail"."""
    raw = result.raw
    code = raw.get("outcome")
    outcome = code if isinstance(code, str) and _CODE.fullmatch(code) else None
    lines = raw.get("diagnostics")
    diagnostics = [
        line[:MAX_LINE]
        for line in (lines if isinstance(lines, list) else [])
        if isinstance(line, str)
    ][:MAX_DIAGNOSTICS]
    error = raw.get("error")
    if isinstance(error, str) and error:
        outcome = outcome or "judge_error"
        diagnostics = [error[:MAX_LINE], *diagnostics][:MAX_DIAGNOSTICS]
    return outcome, diagnostics
