"""A run whose teams talk to the OpenAI-compatible stand-in (`tests/support/openai_server.py`)
through the "scripted" preset: the arrangement the scheduler, wake and key tests share (the
key stored, the stand-in serving, the preset pointing at it, a run and its teams added), so
each test states only its script and what it checks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from justkernel.app import LabRuntime
from justkernel.core.records.runs import Run
from justkernel.core.records.teams import Team
from justkernel.scheduler.scheduler import Scheduler, SchedulerConfig
from tests.support.labs import scripted_preset
from tests.support.openai_server import OpenAIServer


@dataclass
class ScriptedRun:
    """What `scripted_run` arranged: the stand-in, the run, its scheduler and its teams."""

    server: OpenAIServer
    run: Run
    scheduler: Scheduler
    teams: list[Team]

    @property
    def team(self) -> Team:
        """The first (often the only) team."""
        return self.teams[0]


@asynccontextmanager
async def scripted_run(
    runtime: LabRuntime,
    title: str,
    script: Any,
    *,
    key: str,
    lab_key: str | None = None,
    teams: int = 1,
    config: SchedulerConfig | None = None,
    **preset: object,
) -> AsyncIterator[ScriptedRun]:
    """A run titled `title` with `teams` teams on the "scripted" preset (`preset` adds its
    fields, prices say), served by a stand-in answering `script` (a list of replies or a
    handler) to `key`; the lab holds `lab_key` (a wrong key, say), by default `key`. The
    stand-in stops when the block ends; the run is not driven here."""
    runtime.lab.secrets.set("scripted_key", lab_key or key)
    async with OpenAIServer(script, api_key=key) as server:
        runtime.presets["scripted"] = scripted_preset(server.base_url, **preset)
        run = await runtime.lab.runs.create(title)
        scheduler = runtime.scheduler(run.id, config or SchedulerConfig())
        added = [await scheduler.add_team("scripted") for _ in range(teams)]
        yield ScriptedRun(server, run, scheduler, added)
