"""Runs written straight into the store (the event log is the interface): two teams with
receipts and usage, and the Judger's path from a frozen candidate to official results per
test point, as docs/events.md describes them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from justkernel.events import NewEvent
from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings

T = TypeVar("T")
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def in_lab(data_dir: Path, config_dir: Path, work: Callable[[Lab], Awaitable[T]]) -> T:
    """Run `work` on a lab opened on the server's store, in a thread of its own (the sync
    Playwright API owns this thread's event loop)."""

    async def go() -> T:
        lab = await open_lab(Settings(data_dir=data_dir, config_dir=config_dir))
        try:
            return await work(lab)
        finally:
            await lab.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def _receipt(team: str, number: int, cycles: int, slot: int) -> NewEvent:
    return NewEvent(
        "experiment.receipt",
        {
            "experiment": number,
            "commit": sha(f"{team}{number}")[:40],
            "tree_sha256": sha(f"tree{team}{number}"),
            "receipt": {
                "receipt_id": sha(f"r{team}{number}"),
                "mode": "full",
                "status": "measured",
                "cache_hit": False,
                "source_sha256": sha(f"src{team}{number}"),
                "cases_run": 15,
                "cases_passed": 15,
                "failed_cases": [],
                "cycles": {"p1_row": cycles // 2, "p2_col": cycles - cycles // 2},
                "total_est_cycles": cycles,
            },
            "input_packs": {"local": sha("local"), "perf": sha("perf")},
            "executor": {"host": "vm", "worker": "local", "slot": slot, "toolchain_id": "cpu"},
        },
        team,
    )


def judger_events(candidate: str, awaiting: str) -> list[NewEvent]:
    """Two teams, receipts, usage; a candidate through review, submission and an official
    result with three points; a second candidate awaiting human approval."""
    usage = {
        "input_tokens": 1200,
        "output_tokens": 300,
        "total": 1500,
        "reasoning_tokens": None,
        "cached_input_tokens": 200,
        "cost_usd": None,
    }
    events = [
        NewEvent(
            "team.registered",
            {"display_name": f"Qwen-00{n}", "model_preset": "qwen", "provider": "qwen"},
            f"team-00{n}",
        )
        for n in (1, 2)
    ]
    events += [
        NewEvent(
            "model.response", {"provider": "qwen", "usage": usage, "text": HOSTILE}, "team-001"
        ),
        NewEvent("tool.result", {"name": "read_file", "content": HOSTILE, "id": "c1"}, "team-001"),
        _receipt("team-001", 1, 1_800_000_000, 0),
        _receipt("team-002", 1, 1_800_000_000, 1),
        _receipt("team-001", 2, 520_000_000, 0),
        _receipt("team-002", 2, 610_000_000, 1),
    ]
    source = sha("frozen-source")
    events += [
        NewEvent(
            "candidate.frozen",
            {"candidate_id": candidate, "source_sha256": source, "cycles_sum": 520_000_000},
            "team-001",
        ),
        NewEvent(
            "judger.review",
            {
                "candidate_id": candidate,
                "team": "team-001",
                "verdict": "accepted",
                "reasons": ["only op_host/ and op_kernel/ changed"],
                "reviewer": "rules",
            },
        ),
        NewEvent(
            "judger.submission",
            {
                "candidate_id": candidate,
                "team": "team-001",
                "submission_id": "sub-0001",
                "backend": "local",
                "source_sha256": source,
                "quota_used": 1,
                "quota_limit": 50,
            },
        ),
        NewEvent(
            "official.result",
            {
                "submission_id": "sub-0001",
                "candidate_id": candidate,
                "source_sha256": source,
                "status": "official_pass",
                "points": [
                    {
                        "id": "h01",
                        "passed": True,
                        "error_ratio": 0.0,
                        "time_us": 812.5,
                        "best_time_us": 640.0,
                    },
                    {
                        "id": "h02",
                        "passed": True,
                        "error_ratio": 0.0001,
                        "time_us": 1290.0,
                        "best_time_us": 1100.0,
                    },
                    {
                        "id": "h03",
                        "passed": True,
                        "error_ratio": None,
                        "time_us": 455.25,
                        "best_time_us": None,
                    },
                ],
                "prof_sum_us": 2557.75,
                "sota_changed": True,
            },
            "team-001",
        ),
        NewEvent(
            "candidate.frozen",
            {"candidate_id": awaiting, "source_sha256": sha("second"), "cycles_sum": 610_000_000},
            "team-002",
        ),
        NewEvent(
            "judger.review",
            {
                "candidate_id": awaiting,
                "team": "team-002",
                "verdict": "accepted",
                "reasons": [],
                "reviewer": "rules",
            },
        ),
        NewEvent(
            "judger.nomination",
            {
                "candidate_id": awaiting,
                "team": "team-002",
                "cycles_sum": 610_000_000,
                "champion_cycles": 520_000_000,
                "awaiting_approval": True,
            },
        ),
        NewEvent(
            "a2a.message",
            {"message_id": "m1", "to": "all", "type": "feedback", "summary": "official pass"},
        ),
    ]
    return events


async def awaiting_candidate(lab: Lab, run_id: str, candidate_id: str, team: str) -> None:
    """The candidate row the Judger keeps for a nomination that waits for a human (what
    `judger_events` logs for `awaiting`), so a decision acts on the Judger's own state."""
    from sqlalchemy import insert

    from justkernel.store.runs import utc_now_iso
    from justkernel.store.schema import candidates

    now = utc_now_iso()
    async with lab.db.writer.begin() as conn:
        await conn.execute(
            insert(candidates).values(
                run_id=run_id,
                id=candidate_id,
                team_id=team,
                source_sha256=sha("second"),
                archive_blob=lab.blobs.put(b"{}"),
                commit=None,
                receipt_key=sha("receipt-second"),
                cycles_sum=610_000_000,
                local_passed=True,
                status="awaiting_approval",
                review=None,
                created_at=now,
                updated_at=now,
            )
        )


async def candidate_status(lab: Lab, run_id: str, candidate_id: str) -> str:
    from justkernel.store.candidates import CandidateStore

    store = CandidateStore(lab.db, lab.events, lab.blobs)
    return (await store.get(run_id, candidate_id)).status


async def write_run(lab: Lab, name: str, events: list[NewEvent], **meta: Any) -> str:
    run = await lab.runs.create(name, meta=meta)
    await lab.events.append_many(run.id, events)
    return run.id
