"""An offline tournament with the Judger and a local judge: throughput, freeze-to-result time,
feedback latency, and the measured value of sharing (half the teams on the `none` policy).

Run: uv run python bench/tournament.py [--teams 4] [--minutes 20] [--toolchain ascendc-cpu]
Prints the target it ran on, candidates evaluated per minute, time from freeze to official
result, feedback delivery latency to all teams, and best local cycles over time for sharing teams
against control teams, side by side at equal times. The target defaults to the lab's
(`JUSTKERNEL_TOOLCHAIN`, else ascendc-cpu); its one-time build runs before the clock starts.
The offline teams play the target's playbook: what sharing is worth here is the mechanism
working on scripted teams, not what it is worth with real models.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

from justkernel.app import open_runtime
from justkernel.core.targets import playbook_target
from justkernel.judger.settings import JudgerSettings
from justkernel.settings.config import Settings


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


async def tournament(args: argparse.Namespace, root: Path) -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=root / "data",
        config_dir=root / "config",
        hosts_file=root / "hosts.toml",
        models_local_file=root / "models.local.toml",
    )
    async with open_runtime(settings) as runtime:
        toolchain = args.toolchain or runtime.lab.settings.toolchain
        runtime.target(toolchain)  # an unknown id fails here
        print(f"target: {toolchain} (offline playbook: {playbook_target(toolchain)})")
        warming = time.monotonic()
        await runtime.targets.prepare(toolchain)
        print(f"toolchain prepared in {time.monotonic() - warming:.1f} s (before the clock)")
        run = await runtime.lab.runs.create("bench: tournament", meta={"toolchain": toolchain})
        scheduler = runtime.scheduler(run)
        policies = {}
        for n in range(args.teams):
            policy = "broadcast-best" if n % 2 == 0 else "none"
            team = await scheduler.add_team("offline", sharing=policy)
            policies[team.id] = policy
        opened = time.monotonic()
        client = await runtime.judge_client()  # the embedded default: the local judge, started
        assert client is not None
        print(f"local judge started and answering in {time.monotonic() - opened:.1f} s")
        runtime.judger_settings.save(JudgerSettings(poll_seconds=1.0))
        judger = runtime.judger(scheduler, client)
        stop = asyncio.Event()
        judging = asyncio.create_task(judger.run(stop))
        started = time.time()
        reason = await scheduler.run(seconds=args.minutes * 60, busy=judger.busy)
        stop.set()
        await judging
        wall = time.time() - started
        events = [e async for e in runtime.lab.events.iter_all(run.id)]

    full = [
        e
        for e in events
        if e.kind == "experiment.receipt" and e.payload["receipt"]["mode"] == "full"
    ]
    computed = [e for e in full if not e.payload["receipt"]["cache_hit"]]
    print(f"{args.teams} offline teams ({reason}) in {wall:.0f} s")
    print(
        f"full evaluations: {len(full)} ({len(computed)} computed, the rest cache hits), "
        f"{60 * len(full) / wall:.1f} per minute"
    )
    frozen = {e.payload["candidate_id"]: _ts(e.ts) for e in events if e.kind == "candidate.frozen"}
    results = [e for e in events if e.kind == "official.result"]
    delays = [
        _ts(e.ts) - frozen[e.payload["candidate_id"]]
        for e in results
        if e.payload["candidate_id"] in frozen
    ]
    if delays:
        print(
            f"freeze -> official result: {len(delays)} submissions, "
            f"median {sorted(delays)[len(delays) // 2]:.1f} s, max {max(delays):.1f} s"
        )
    else:
        print("freeze -> official result: no submission finished")
    posted = {
        e.payload["message_id"]: _ts(e.ts)
        for e in events
        if e.kind == "a2a.message" and e.payload["type"] == "feedback"
    }
    acked = [
        _ts(e.ts) - posted[e.payload["message_id"]]
        for e in events
        if e.kind == "a2a.acked" and e.payload["message_id"] in posted
    ]
    if acked:
        print(
            f"feedback delivery (post -> acknowledged by the team): {len(acked)} deliveries, "
            f"median {sorted(acked)[len(acked) // 2]:.1f} s, max {max(acked):.1f} s"
        )
    print(f"best local cycles over time (minutes since start), target {toolchain}:")
    best: dict[str, int] = {}
    improvements: list[tuple[float, str, int]] = []
    for e in full:
        cycles = e.payload["receipt"]["total_est_cycles"]
        if e.payload["receipt"]["status"] != "measured" or cycles is None:
            continue
        if e.team not in best or cycles < best[e.team]:
            best[e.team] = cycles
            minute = (_ts(e.ts) - started) / 60
            improvements.append((minute, e.team, cycles))
            group = "sharing" if policies[e.team] != "none" else "control"
            print(f"  {minute:6.2f}  {e.team} ({group:7s}) {cycles:>14,}")
    for group in ("sharing", "control"):
        mine = [c for t, c in best.items() if (policies[t] != "none") == (group == "sharing")]
        if mine:
            print(f"final best, {group}: mean {sum(mine) / len(mine):,.0f}, best {min(mine):,}")
    equal_time(improvements, policies, args.minutes)


def equal_time(
    improvements: list[tuple[float, str, int]], policies: dict[str, str], minutes: float
) -> None:
    """Mean best-so-far cycles of each group at the same moments, once every team has a
    measurement, and how many fewer the sharing teams have."""
    print("at equal time: mean best cycles so far (minute, sharing, control, sharing fewer by)")
    marks = [minutes * k / 12 for k in range(1, 13)]
    for mark in marks:
        so_far: dict[str, int] = {}
        for minute, team, cycles in improvements:
            if minute <= mark:
                so_far[team] = cycles
        groups = {
            group: [c for t, c in so_far.items() if (policies[t] != "none") == (group == "sharing")]
            for group in ("sharing", "control")
        }
        wanted = {
            group: sum(1 for p in policies.values() if (p != "none") == (group == "sharing"))
            for group in groups
        }
        if any(len(groups[g]) < wanted[g] or not groups[g] for g in groups):
            print(f"  {mark:6.2f}  (not every team measured yet)")
            continue
        sharing = sum(groups["sharing"]) / len(groups["sharing"])
        control = sum(groups["control"]) / len(groups["control"])
        print(f"  {mark:6.2f}  {sharing:>14,.0f}  {control:>14,.0f}  {1 - sharing / control:7.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument(
        "--toolchain", default=None, help="ascendc-cpu, cpu or cann (default: the lab's)"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="jk-bench-tournament-", dir="/tmp"))
    root.chmod(0o755)
    try:
        asyncio.run(tournament(args, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
