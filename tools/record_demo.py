"""Record the bundled demo session: a real offline run of a few teams with the Judger and the
local judge (reviews, nominations, submissions, official results per point), exported as a
session bundle marked simulated, written to `resources/demo/session.jkbundle`.

    uv run python tools/record_demo.py [--teams 3] [--seconds 150] [--output PATH]

It needs the full embedded lab (g++ 12, valgrind, bubblewrap) because the run is real: the
offline playbook model drives the teams through real Ascend C builds and cycle simulations on
the lab's default target (`ascendc-cpu`). The bundle carries the pipeline traces of each team's
best receipt only (every trace would make it tens of MB). Playing the demo
afterwards (`justkernel demo`) needs none of that. The data folder is a fresh temporary one
(world-traversable, as the sandbox user requires) and is removed at the end; nothing is read
from the developer's .env, data or secrets.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from pathlib import Path

from justkernel.app import open_runtime
from justkernel.core.events.runs import RunSummary
from justkernel.events.log import EventLog
from justkernel.events.run_export import export_run
from justkernel.scheduler.scheduler import SchedulerConfig
from justkernel.scheduler.summary import RunFigures
from justkernel.settings.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "resources" / "demo" / "session.jkbundle"
MAX_BYTES = 5 * 1024 * 1024


async def record(teams: int, seconds: float, output: Path, folder: Path) -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=folder / "data",
        config_dir=folder / "config",
        database_url=None,
        api_token=None,
        hosts_file=folder / "hosts.toml",
        models_local_file=folder / "models.local.toml",
        judge="local",
        judge_dir=None,
        judge_url=None,
    )
    async with open_runtime(settings, slots=2) as runtime:
        toolchain = runtime.lab.settings.toolchain  # the lab's default target: ascendc-cpu
        await runtime.targets.prepare(toolchain)  # the one-time build stays out of the demo
        run = await runtime.lab.runs.create(
            "Offline tournament (recorded)",
            meta={
                "model": "offline",
                "teams": teams,
                "mode": "multi-team" if teams > 1 else "single main team",
                "offline": True,
                "simulated": True,
                "recorded_by": "tools/record_demo.py",
                "toolchain": toolchain,
            },
        )
        scheduler = runtime.scheduler(run, SchedulerConfig())
        for _ in range(teams):
            await scheduler.add_team("offline")
        client = await runtime.judge_client()  # the local judge, started in the temp folder
        assert client is not None
        judger = runtime.judger(scheduler, client)
        stop_judging = asyncio.Event()
        judging = asyncio.create_task(judger.run(stop_judging))
        reason = await scheduler.run(seconds=seconds, busy=judger.busy)
        stop_judging.set()
        await judging
        figures = RunFigures(run.id)
        await figures.catch_up(runtime.lab.events)
        await figures.refresh(scheduler.registry, scheduler.experiments)
        summary = RunSummary(**reason.fields(), **figures.to_dict())  # as app.RunSession logs it
        await runtime.lab.events.append(run.id, summary)
        chosen = await best_receipts(runtime.lab.events, run.id)
        result = await export_run(
            runtime.lab, run.id, output, overwrite=True, trace_receipts=chosen
        )
    size = result.size
    print(f"recorded {result.event_count} events, {result.blob_count} blobs: {output} ({size:,} B)")
    if size > MAX_BYTES:
        raise SystemExit(f"the demo session is over {MAX_BYTES:,} bytes; record fewer seconds")


async def best_receipts(events: EventLog, run_id: str) -> set[str]:
    """The receipt blob of each team's best measured full job: the only receipts whose
    pipeline traces the demo bundle carries (every trace would make it tens of MB)."""
    best: dict[str, tuple[int, str]] = {}
    async for event in events.iter_all(run_id):
        if event.kind != "experiment.receipt" or not event.team:
            continue
        receipt, blobs = event.payload.get("receipt") or {}, event.payload.get("blobs") or []
        cycles = receipt.get("total_est_cycles")
        if receipt.get("status") != "measured" or cycles is None or not blobs:
            continue
        if event.team not in best or cycles < best[event.team][0]:
            best[event.team] = (cycles, blobs[0])
    return {sha for _cycles, sha in best.values()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=150.0)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="jk-demo-record-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        asyncio.run(record(args.teams, args.seconds, args.output.absolute(), folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
