"""Which earlier candidate a new one was derived from, decided from the sources alone.

A team never says what its candidate came from (a model's claim is not evidence); the lab
compares the new source with the team's own earlier candidates and with the public ones it
fetched, and names the closest: the fewest differing lines, a tie going to the most recent.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

ParentKind = Literal["own", "adopted"]
PARENT_KINDS: frozenset[str] = frozenset(("own", "adopted"))


@dataclass(frozen=True, slots=True)
class ParentOption:
    """An earlier candidate the new one may come from."""

    candidate_id: str
    kind: ParentKind
    order: str  # created_at (ISO text sorts by time); the later wins a tie
    files: dict[str, bytes]


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines()


def line_distance(a: dict[str, bytes], b: dict[str, bytes]) -> int:
    """Lines removed plus lines added to turn `a` into `b`, over every file of either."""
    total = 0
    for rel in sorted(set(a) | set(b)):
        old, new = a.get(rel), b.get(rel)
        if old == new:
            continue
        left, right = _lines(old), _lines(new)
        matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                total += (i2 - i1) + (j2 - j1)
    return total


def closest_parent(files: dict[str, bytes], options: Sequence[ParentOption]) -> ParentOption | None:
    """The option whose source differs from `files` in the fewest lines (latest on a tie)."""
    best: tuple[int, str] | None = None
    chosen: ParentOption | None = None
    for option in options:
        distance = line_distance(option.files, files)
        if best is None or distance < best[0] or (distance == best[0] and option.order > best[1]):
            best, chosen = (distance, option.order), option
    return chosen


def checked_parents(
    nodes: Sequence[tuple[str, str | None, str | None]],
) -> dict[str, tuple[str, str] | None]:
    """Each node's (parent, kind) kept only when the parent is a candidate listed before it
    and the kind is known: `nodes` are (id, parent, kind) in the order they were frozen, so
    an imported bundle's lying parent (another run's id, a later one, itself) is dropped and
    a cycle cannot be formed."""
    seen: set[str] = set()
    out: dict[str, tuple[str, str] | None] = {}
    for candidate_id, parent, kind in nodes:
        ok = parent is not None and parent in seen and kind in PARENT_KINDS
        out[candidate_id] = (parent, kind) if ok and parent and kind else None
        seen.add(candidate_id)
    return out
