"""What the local judge tells its client, so feedback cannot rebuild the hidden points.

The team's model writes the kernel, so it can spoil outputs or burn cycles on purpose and read
the answer. An exact error ratio is spoiled/elements (1/r is a point's element count) and an
exact time is cycles/1000; both went back verbatim. The judge now answers, per point:

- `passed` and `outcome`, as before;
- `error_bucket`, for failing points only: one of ERROR_BUCKETS (the share of wrong elements of
  the worst output), so 1 and thousands of spoiled elements of a typical point read the same,
  and 1 and 6 of the smallest a point can be (64 elements); a passing point carries none;
- `time_us`: the exact time times (1 + n), n in [-NOISE, +NOISE] drawn from an HMAC of the
  judge's own key, the point and the source hash (the same source always gets the same answer,
  another source other noise), then rounded to SIGNIFICANT significant figures;
- `best_time_us`: the lowest such time over the judge's submissions;
- `prof_sum_us`: the sum of the published times, rounded the same way.

Every published time is within NOISE + half a unit of the last kept figure (at most 0.25% +
0.05%) of the exact one, and a prof_sum within 0.35%, so a kernel more than 0.7% faster always
reads faster. The exact figures stay in the judge's store for its operator (docs/judge-api.md).
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Mapping
from typing import Any

NOISE = 0.0025  # relative amplitude of the keyed noise on each point's time
SIGNIFICANT = 4  # significant figures of a published time
ERROR_BUCKETS = ("<10%", "<50%", ">=50%")
_BOUNDS = (0.10, 0.50)
HIDDEN_EVALUATION = ("seconds", "receipt_key")  # wall time and job key stay with the judge


def error_bucket(ratio: float | None) -> str | None:
    """The coarse label of a failing point's error ratio (None when nothing was compared)."""
    if ratio is None:
        return None
    for bound, label in zip(_BOUNDS, ERROR_BUCKETS, strict=False):
        if ratio < bound:
            return label
    return ERROR_BUCKETS[-1]


def rounded(value: float) -> float:
    """`value` to SIGNIFICANT significant figures."""
    if value == 0 or not math.isfinite(value):
        return value
    digits = SIGNIFICANT - 1 - math.floor(math.log10(abs(value)))
    return round(value, digits)


class Publisher:
    """Turns the judge's exact result into the answer its clients get (see the module doc)."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _noise(self, point_id: str, source_sha256: str) -> float:
        """A deterministic draw in [-NOISE, +NOISE] for this point and source."""
        mac = hmac.new(self._key, f"{point_id}\0{source_sha256}".encode(), hashlib.sha256)
        unit = int.from_bytes(mac.digest()[:8], "big") / 2**64  # [0, 1)
        return (2 * unit - 1) * NOISE

    def time(self, point_id: str, source_sha256: str, exact: float | None) -> float | None:
        if exact is None:
            return None
        return rounded(exact * (1 + self._noise(point_id, source_sha256)))

    def times(self, result: Mapping[str, Any], source_sha256: str) -> dict[str, float]:
        """The published time of every point that passed with a time."""
        out = {}
        for p in result["points"]:
            t = self.time(p["id"], source_sha256, p.get("time_us"))
            if p.get("passed") and t is not None:
                out[p["id"]] = t
        return out

    def result(self, exact: Mapping[str, Any], source_sha256: str) -> dict[str, Any]:
        """The client's view of a stored result (`public_best_time_us` was kept at finish)."""
        points = []
        for p in exact["points"]:
            passed = p.get("passed") is True
            points.append(
                {
                    "id": p["id"],
                    "passed": passed,
                    "outcome": p.get("outcome"),
                    "error_bucket": None if passed else error_bucket(p.get("error_ratio")),
                    "time_us": self.time(p["id"], source_sha256, p.get("time_us")),
                    "best_time_us": p.get("public_best_time_us"),
                }
            )
        timed = [p["time_us"] for p in points if p["time_us"] is not None]
        complete = exact.get("prof_sum_us") is not None and len(timed) == len(points)
        evaluation = {
            k: v for k, v in (exact.get("evaluation") or {}).items() if k not in HIDDEN_EVALUATION
        }
        return {
            **{k: v for k, v in exact.items() if k not in ("points", "prof_sum_us", "evaluation")},
            "points": points,
            "prof_sum_us": rounded(sum(timed)) if complete else None,
            "evaluation": evaluation,
            "feedback": "pass/fail, error buckets, noised rounded times (docs/judge-api.md)",
        }
