"""Tier 3, the composition root: `open_runtime` builds every repository and service of a lab
process once (the store's repositories through `open_lab`, then the operator, worker pool,
evaluator, model presets, checkpointer and the judge client on first use), and `RunSession`
drives one run on them. The CLI and the web server are thin adapters over these two; nothing
below this package builds a service of its own.

Importing this package is cheap: the agent stack (scheduler, Judger) is imported when a run
is driven, so a server that only shows runs never pays for it."""

from justkernel.app.runtime import LabRuntime, default_slots, lab_board, open_runtime
from justkernel.app.session import RunSession, TeamPlan

__all__ = [
    "LabRuntime",
    "RunSession",
    "TeamPlan",
    "default_slots",
    "lab_board",
    "open_runtime",
]
