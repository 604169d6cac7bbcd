"""A run started as a user's first run is: no toolchain named anywhere, so it lands on the
lab's default target (`ascendc-cpu`). The suite pins the C port (`JUSTKERNEL_TOOLCHAIN=cpu`,
tests/conftest.py); a test of the default deletes that pin and starts its run here."""

from __future__ import annotations

import os

from justkernel.app import LabRuntime, RunSession, TeamPlan
from justkernel.scheduler.scheduler import SchedulerConfig

DEFAULT_TARGET = "ascendc-cpu"


async def start_on_default_target(runtime: LabRuntime, name: str, preset: str) -> RunSession:
    """A run of one team on `preset`, started with no toolchain setting; it is checked to be
    on the default target before the caller drives it."""
    assert "JUSTKERNEL_TOOLCHAIN" not in os.environ, "delete the suite's C port pin first"
    session = await RunSession.start(
        runtime, name, meta={}, config=SchedulerConfig(), teams=[TeamPlan(preset)]
    )
    assert session.run.meta["toolchain"] == DEFAULT_TARGET
    return session
