"""The lab's targets: which toolchain builds and measures a team's project.

A run has one target for its whole life (recorded in its meta as `toolchain`), so every receipt
of a run is comparable. The ids live here, in the lowest tier, because settings, workers, the
scheduler, the dashboard and the judge all name them and must agree on one spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

ToolchainId = Literal["ascendc-cpu", "cpu", "cann"]
"""`ascendc-cpu`: the msopgen Ascend C project on this CPU (the contest's own project);
`cpu`: the C port of the operator; `cann`: the Ascend C project built by the CANN toolkit."""

TOOLCHAIN_IDS: tuple[ToolchainId, ...] = get_args(ToolchainId)

DEFAULT_TOOLCHAIN: ToolchainId = "ascendc-cpu"

PlaybookTarget = Literal["ascendc", "cpu"]


def playbook_target(toolchain_id: str) -> PlaybookTarget:
    """Which project a team's source is written for: the C port (`cpu`) or the Ascend C
    project (`ascendc`, shared by `ascendc-cpu` and `cann`, which build the same files)."""
    if toolchain_id not in TOOLCHAIN_IDS:
        raise ValueError(f"unknown toolchain {toolchain_id!r} (known: {', '.join(TOOLCHAIN_IDS)})")
    return "cpu" if toolchain_id == "cpu" else "ascendc"


LEGACY_TOOLCHAIN: ToolchainId = "cpu"  # a run without `toolchain` in its meta predates targets


def run_toolchain(meta: Mapping[str, Any]) -> ToolchainId:
    """The target a run recorded when it started (`cpu` for a run from before targets)."""
    value = meta.get("toolchain") or LEGACY_TOOLCHAIN
    if value not in TOOLCHAIN_IDS:
        raise ValueError(f"run meta names an unknown toolchain {value!r}")
    return value  # type: ignore[no-any-return]


class TargetMismatch(ValueError):
    """A receipt or candidate of one target offered to a run of another: a run never mixes
    targets (their cycles are not comparable, their files are other projects)."""


def check_same_target(run_toolchain_id: str, receipt_toolchain_id: str, what: str) -> None:
    """Refuse `what` (a candidate, a receipt) built by another toolchain than the run's."""
    if receipt_toolchain_id != run_toolchain_id:
        raise TargetMismatch(
            f"{what} was built by {receipt_toolchain_id}, but this run's target is "
            f"{run_toolchain_id}: a run never mixes targets"
        )
