"""Runs written straight into the store (the event log is the interface): two teams with
receipts and usage, and the Judger's path from a frozen candidate to official results per
test point, as docs/events.md describes them; the lineage, work-log-steps and Judger-table
runs their tests and the screenshot set share."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from justkernel.core.events.agents import (
    ExperimentPlanned,
    ExperimentReceipt,
    ModelResponse,
    ReceiptSummary,
    Todo,
    TodosUpdated,
    ToolCall,
    ToolCallRef,
    ToolResult,
    Usage,
)
from justkernel.core.events.runs import DispatchStopped, TeamRegistered, TeamTurnEnd
from justkernel.events import NewEvent
from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings
from tests.support.candidates import freeze_text

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


# --- the lineage run: four candidates frozen through the real store, one adopted ---------

LINEAGE_BASE = "".join(f"    acc += x[{i}] * y[{i}];\n" for i in range(24))
LINEAGE_THEIRS = "".join(f"    out[{i}] = in[{i}];\n" for i in range(24))


async def _freeze(
    lab: Lab, run_id: str, team: str, text: str, cycles: int, fetched: tuple[str, ...] = ()
) -> str:
    cand = await freeze_text(lab, run_id, team, text, cycles=cycles, fetched=fetched)
    return cand.id


async def write_lineage_run(lab: Lab) -> dict[str, str]:
    """A root (a), its own child (b, measured, officially judged and messaged about), another
    team's root (c) and a candidate adopted from it (d); the run's and candidates' ids."""
    run = await lab.runs.create("lineage run", meta={"simulated": True})
    await lab.events.append_many(
        run.id,
        [
            NewEvent("team.registered", {"display_name": "Alpha", "model_preset": "x"}, t)
            for t in ("team-001", "team-002")
        ],
    )
    base, theirs = LINEAGE_BASE, LINEAGE_THEIRS
    ids = {"run": run.id}
    ids["a"] = await _freeze(lab, run.id, "team-001", base, 900_000_000)
    ids["b"] = await _freeze(
        lab, run.id, "team-001", base + f"    // tuned {HOSTILE}\n", 700_000_000
    )
    ids["c"] = await _freeze(lab, run.id, "team-002", theirs, 650_000_000)
    ids["d"] = await _freeze(
        lab, run.id, "team-001", theirs + "    // adopted\n", 600_000_000, (ids["c"],)
    )
    cand_b = await lab.candidates.get(run.id, ids["b"])
    await lab.events.append_many(
        run.id,
        [
            NewEvent(
                "experiment.receipt",
                {
                    "experiment": 2,
                    "receipt": {
                        "receipt_id": cand_b.receipt_key,
                        "mode": "full",
                        "status": "measured",
                        "cases_run": 15,
                        "cases_passed": 15,
                        "total_est_cycles": 700_000_000,
                    },
                },
                "team-001",
            ),
            NewEvent(
                "a2a.message",
                {
                    "message_id": "msg-lin-1",
                    "to": "all",
                    "type": "message",
                    "summary": f"{ids['b']} tiles the reduction",
                },
                "team-001",
            ),
            # the Judger's feedback: its words for the model, its code for the page
            NewEvent(
                "a2a.message",
                {
                    "message_id": "msg-lin-fb",
                    "to": "team-001",
                    "type": "feedback",
                    "sender": "judger",
                    "summary": f"your candidate {ids['b']}: official_pass",
                    "summary_code": "feedback_own",
                    "summary_params": {"candidate": ids["b"], "status": "official_pass"},
                },
            ),
            NewEvent(
                "official.result",
                {
                    "submission_id": "sub-lin-1",
                    "candidate_id": ids["b"],
                    "status": "official_pass",
                    "points": [
                        {"id": 1, "passed": True, "time_us": 12.5},
                        {"id": 2, "passed": False, "outcome": "precision"},
                    ],
                    "prof_sum_us": 30.0,
                },
                "team-001",
            ),
        ],
    )
    return ids


# --- the work log as steps: tool requests and returns, todos, plans and their receipts ---

STEP_TODOS = [
    {"content": "Measure the baseline", "status": "completed"},
    {"content": "Tile the rows", "status": "in_progress"},
]
READ_RETURN = json.dumps({"ok": True, "lines": ["a", "b"], "meta": {"size": 123, "path": "x"}})


def _step_receipt(number: int, mode: str, status: str, cycles: int | None) -> NewEvent:
    summary = ReceiptSummary(
        receipt_id=f"r{number}",
        mode=mode,
        status=status,
        cases_run=4,
        cases_passed=4 if status == "measured" else 1,
        total_est_cycles=cycles,
    )
    return NewEvent.of(ExperimentReceipt(experiment=number, receipt=summary), "team-001")


def steps_events() -> list[NewEvent]:
    """team-001: a model call asking for two tools whose returns come back out of order, its
    todos, two plans (one incorrect, one measured), its turn's end; team-002: one tool call;
    the dispatch stopped by the time limit."""
    usage = Usage(input_tokens=1200, output_tokens=300, total=1500)
    calls = [
        ToolCallRef(id="call-1", name="read_file", args='{"path": "op_kernel/add.cpp"}'),
        ToolCallRef(id="call-2", name="write_todos", args=json.dumps({"todos": STEP_TODOS})),
    ]
    repr_todos = "Updated todo list to " + repr(STEP_TODOS)  # what LangChain's write_todos returns
    team = "team-001"
    return [
        NewEvent.of(TeamRegistered(display_name="Steps-A", model_preset="qwen"), team),
        NewEvent.of(TeamRegistered(display_name="Steps-B", model_preset="qwen"), "team-002"),
        NewEvent.of(ModelResponse(seconds=2.5, usage=usage, tool_calls=calls), team),
        NewEvent.of(ToolCall(id="call-1", name="read_file", args=calls[0].args), team),
        NewEvent.of(ToolCall(id="call-2", name="write_todos", args=calls[1].args), team),
        NewEvent.of(
            ToolResult(id="call-2", name="write_todos", seconds=0.01, content=repr_todos), team
        ),
        NewEvent.of(TodosUpdated(todos=[Todo(**x) for x in STEP_TODOS]), team),
        NewEvent.of(
            ToolResult(id="call-1", name="read_file", seconds=0.25, content=READ_RETURN), team
        ),
        NewEvent.of(ExperimentPlanned(experiment=1, hypothesis="tile the rows"), team),
        _step_receipt(1, "probe", "incorrect", None),
        NewEvent.of(ExperimentPlanned(experiment=2, hypothesis="double buffer"), team),
        _step_receipt(2, "probe", "probe_passed", None),
        _step_receipt(2, "full", "measured", 510_000),
        NewEvent.of(ToolCall(id="call-9", name="grep", args='{"pattern": "x"}'), "team-002"),
        NewEvent.of(TeamTurnEnd(status="done", detail="the team has nothing left to try"), team),
        NewEvent.of(DispatchStopped(reason="time limit reached")),
    ]


# --- the Judger table: a pass, a compile failure, one reviewed, one awaiting a human -----

JUDGER_TEAM = "team-001"
DIAGNOSTICS = ["kernel_f16: the compiler ran out of time", "$ g++ -c op_kernel/<kernel>.cpp"]


def _frozen(cand: str, cycles: int) -> NewEvent:
    payload = {"candidate_id": cand, "source_sha256": sha(cand), "cycles_sum": cycles}
    return NewEvent("candidate.frozen", payload, JUDGER_TEAM)


def _review(cand: str) -> NewEvent:
    payload = {
        "candidate_id": cand,
        "team": JUDGER_TEAM,
        "verdict": "accepted",
        "reviewer": "rules",
    }
    return NewEvent("judger.review", payload)


def _submitted(cand: str, sub: str) -> NewEvent:
    payload = {"candidate_id": cand, "team": JUDGER_TEAM, "submission_id": sub, "backend": "local"}
    return NewEvent("judger.submission", payload)


def _result(cand: str, sub: str, passed: bool, **extra: object) -> NewEvent:
    outcome = "passed" if passed else "compile_failed"
    points = [
        {"id": f"h{n:02d}", "passed": passed, "time_us": 100.0 + n if passed else None}
        | {"outcome": outcome}
        for n in range(1, 16)
    ]
    payload = {
        "submission_id": sub,
        "candidate_id": cand,
        "source_sha256": sha(cand),
        "status": "official_pass" if passed else "official_fail",
        "points": points,
        "prof_sum_us": sum(p["time_us"] for p in points) if passed else None,
        "sota_changed": passed,
        **extra,
    }
    return NewEvent("official.result", payload, JUDGER_TEAM)


def judger_table_events() -> list[NewEvent]:
    """A pass (cand-aaa), a compile failure with the judge's words (cand-bbb), an accepted
    candidate not (yet) nominated (cand-ccc), and a nomination that waits for a human
    (cand-ddd)."""
    registered = {"display_name": "Offline-001", "model_preset": "offline", "provider": "offline"}
    nomination = {"candidate_id": "cand-ddd", "team": JUDGER_TEAM, "awaiting_approval": True}
    return [
        NewEvent("team.registered", registered, JUDGER_TEAM),
        _frozen("cand-aaa", 900),
        _review("cand-aaa"),
        _submitted("cand-aaa", "sub-a"),
        _result("cand-aaa", "sub-a", True),
        _frozen("cand-bbb", 800),
        _review("cand-bbb"),
        _submitted("cand-bbb", "sub-b"),
        _result("cand-bbb", "sub-b", False, outcome="compile_failed", diagnostics=DIAGNOSTICS),
        _frozen("cand-ccc", 950),
        _review("cand-ccc"),
        _frozen("cand-ddd", 700),
        _review("cand-ddd"),
        NewEvent("judger.nomination", nomination),
    ]


async def write_judger_table_run(lab: Lab) -> str:
    """The run of `judger_table_events`, with the Judger's row for the awaiting nomination."""
    run_id = await write_run(lab, "judger grouped", judger_table_events())
    await awaiting_candidate(lab, run_id, "cand-ddd", JUDGER_TEAM)
    return run_id
