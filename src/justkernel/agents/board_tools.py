"""The team's collaboration tools: messages, the inbox, public candidates, experience notes.

They reach other teams only through the lab board, whose sharing policies decide who hears
what. Fetched sources land in `scratch/candidates/` and never overwrite the team's own source;
a candidate with any path that could not be written as a plain file (a `.git` part, say) is
not fetched at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from pydantic import Field

from justkernel.a2a.board import BoardError, LabBoard
from justkernel.a2a.policies import (
    DEFAULT_POLICY,
    SharingPolicy,
    can_receive_from_others,
    shares_publicly,
)
from justkernel.agents.tools import TeamContext
from justkernel.core.relpath import relpath_problem
from justkernel.store.candidates import CandidateStore
from justkernel.teams.workspace import SCRATCH_DIR, WorkspaceError

INBOX_LIMIT = 20


@dataclass
class BoardAccess:
    board: LabBoard
    candidates: CandidateStore
    policy: SharingPolicy = DEFAULT_POLICY


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def build_board_tools(ctx: TeamContext, access: BoardAccess) -> list[BaseTool]:
    board, store = access.board, access.candidates

    @tool
    async def send_message(
        to: Annotated[str, Field(description='a team id (e.g. team-002) or "all"')],
        text: Annotated[str, Field(description="the message, short (at most 4000 characters)")],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        """Send a short message to another team (its id, e.g. team-002) or to "all"."""
        try:
            message, _ = await board.post(
                ctx.run_id,
                sender=ctx.team_id,
                sender_message_id=tool_call_id,
                recipient=to,
                type="message",
                payload={"text": text[:4000], "summary": text[:300]},
            )
        except BoardError as exc:
            return _json({"error": str(exc)})
        return _json({"message_id": message.id, "status": "sent"})

    @tool
    async def read_inbox(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Deliver your unread messages: other teams' candidates and notes, and official
        feedback from the Judger (including correction tasks for your own submissions)."""
        messages = await board.deliver(ctx.run_id, ctx.team_id, tool_call_id)
        shown = [m.to_dict() for m in messages[:INBOX_LIMIT]]
        return _json({"messages": shown, "more": max(0, len(messages) - INBOX_LIMIT)})

    @tool
    async def read_public_candidates() -> str:
        """Frozen candidates other teams share: cycles, receipt and source hashes, status."""
        if not can_receive_from_others(access.policy):
            return _json({"candidates": [], "note": "control team: no access to other teams"})
        policies, _order = await board.policies(ctx.run_id)
        rows = []
        for cand in await store.list(ctx.run_id):
            if cand.team_id == ctx.team_id or not cand.local_passed:
                continue
            if not can_receive_from_others(policies.get(cand.team_id, DEFAULT_POLICY)):
                continue  # control teams do not share
            rows.append(
                {
                    "candidate_id": cand.id,
                    "team": cand.team_id,
                    "total_est_cycles": cand.cycles_sum,
                    "receipt_id": cand.receipt_key,
                    "source_sha256": cand.source_sha256,
                    "status": cand.status,
                }
            )
        rows.sort(key=lambda r: r["total_est_cycles"] or 2**63)
        return _json({"candidates": rows[:20], "my_best_total_est_cycles": ctx.best_cycles})

    @tool
    async def fetch_candidate_source(
        candidate_id: Annotated[
            str, Field(description="a candidate_id read_public_candidates listed")
        ],
    ) -> str:
        """Copy a public candidate's source into scratch/candidates/<id>/ (your own op_host/
        and op_kernel/ stay untouched) and return its files."""
        if not can_receive_from_others(access.policy):
            return _json({"error": "control team: no access to other teams' sources"})
        try:
            cand = await store.get(ctx.run_id, candidate_id)
        except LookupError:
            return _json(
                {
                    "error": f"no candidate {candidate_id}",
                    "next": "read_public_candidates lists the candidates you can fetch",
                }
            )
        if cand.team_id == ctx.team_id:
            return _json({"error": "that candidate is your own"})
        policies, _order = await board.policies(ctx.run_id)
        if not shares_publicly(policies.get(cand.team_id, DEFAULT_POLICY)):
            return _json(
                {"error": f"{candidate_id} belongs to a control team, which shares nothing"}
            )
        files = store.files(cand)
        folder = f"{SCRATCH_DIR}/candidates/{candidate_id}"
        targets: dict[str, Path] = {}
        refused: list[str] = []
        for rel in files:  # every path checked before anything is written
            problem = relpath_problem(rel)
            try:
                if problem is None:
                    targets[rel] = ctx.workspace.resolve(f"{folder}/{rel}", write=True)
            except WorkspaceError as exc:
                problem = str(exc)
            if problem is not None:
                refused.append(f"{rel}: {problem}")
        if refused:
            return _json({"error": "candidate not fetched: " + "; ".join(refused)})
        for rel, target in targets.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[rel])
        return _json(
            {
                "candidate_id": candidate_id,
                "folder": f"/{folder}",
                "total_est_cycles": cand.cycles_sum,
                "files": {rel: data.decode("utf-8", "replace") for rel, data in files.items()},
            }
        )

    @tool
    async def record_experience(
        condition: Annotated[str, Field(description="where it holds: shapes, dtype, axes")],
        change: Annotated[str, Field(description="what was changed in the kernel or tiling")],
        effect: Annotated[str, Field(description="the measured effect, with figures")],
        tool_call_id: Annotated[str, InjectedToolCallId],
        receipt_id: Annotated[
            str | None, Field(description="the receipt that shows the effect")
        ] = None,
        candidate_id: Annotated[str | None, Field(description="the candidate, if frozen")] = None,
    ) -> str:
        """Share a conditioned lesson: "on <condition>, <change> gave <effect>", with the
        receipt (and candidate) that shows it."""
        payload = {
            "condition": condition,
            "change": change,
            "effect": effect,
            "receipt_id": receipt_id,
            "candidate_id": candidate_id,
            "summary": f"on {condition}: {change} -> {effect}"[:300],
        }
        try:
            message, _ = await board.post(
                ctx.run_id,
                sender=ctx.team_id,
                sender_message_id=tool_call_id,
                recipient="all",
                type="experience",
                payload=payload,
            )
        except BoardError as exc:
            return _json({"error": str(exc)})
        return _json({"message_id": message.id, "status": "recorded"})

    return [
        send_message,
        read_inbox,
        read_public_candidates,
        fetch_candidate_source,
        record_experience,
    ]
