"""Sharing policies: who hears about what a team shares.

- `broadcast-best` (default): pushes go to every other broadcast-best team.
- `ring`: pushes go to the next ring team by team number (the last wraps to the first).
- `pull`: nothing is pushed either way; the team reads public candidates when it wants.
- `none`: a control team. It shares nothing and receives nothing from other teams (its own
  official feedback still reaches it), so it measures what sharing is worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

SharingPolicy = Literal["broadcast-best", "ring", "pull", "none"]
POLICIES: tuple[SharingPolicy, ...] = ("broadcast-best", "ring", "pull", "none")
DEFAULT_POLICY: SharingPolicy = "broadcast-best"


def push_recipients(
    sender: str, policies: dict[str, SharingPolicy], order: Sequence[str]
) -> list[str]:
    """Teams a broadcast from `sender` is pushed to (`order`: team ids by number)."""
    mine = policies.get(sender, DEFAULT_POLICY)
    others = [t for t in order if t != sender]
    if mine == "broadcast-best":
        return [t for t in others if policies.get(t, DEFAULT_POLICY) == "broadcast-best"]
    if mine == "ring":
        ring = [t for t in order if policies.get(t, DEFAULT_POLICY) == "ring"]
        if len(ring) < 2:
            return []
        return [ring[(ring.index(sender) + 1) % len(ring)]]
    return []


def can_receive_from_others(policy: SharingPolicy) -> bool:
    return policy != "none"


def shares_publicly(policy: SharingPolicy) -> bool:
    return policy != "none"
