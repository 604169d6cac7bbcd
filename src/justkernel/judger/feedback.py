"""What a team is told about an official result: the per-point figures the judge gave.

One place builds them, so the Judger's feedback and the tests that check what a team can learn
from it read the same thing.
"""

from __future__ import annotations

from typing import Any

from justkernel.evaluation.protocol import OfficialResult


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
