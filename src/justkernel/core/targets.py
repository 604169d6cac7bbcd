"""The lab's targets: which toolchain builds and measures a team's project.

A run has one target for its whole life (recorded in its meta as `toolchain`), so every receipt
of a run is comparable. The ids live here, in the lowest tier, because settings, workers, the
scheduler, the dashboard and the judge all name them and must agree on one spelling.
"""

from __future__ import annotations

from typing import Literal, get_args

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
