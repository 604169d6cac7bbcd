"""What the lineage panel shows of one candidate, read from the run's own events and the blob
store: the receipt it was frozen with, its source diffed against its parent's, and the board
messages that name it.

An imported run's events and blobs are hostile: a frozen archive that is missing or not an
archive gives a diff error, never a 500, and the diff is clipped.
"""

from __future__ import annotations

import binascii
import difflib
import json
from typing import Any

from justkernel.a2a.board import coded_summary
from justkernel.events import Event
from justkernel.lab import Lab
from justkernel.store.board import BoardStore
from justkernel.store.candidates import unpack_files
from justkernel.web.lineage_index import MentionIndex

RECEIPT_KINDS = ("experiment.receipt", "a2a.evaluation")
MAX_DIFF_CHARS = 200_000
MAX_MESSAGES = 50
PAGE = 2000


def _before(at: int | None) -> int | None:
    return None if at is None else at + 1


async def frozen_archive(lab: Lab, run_id: str, seq: int) -> dict[str, bytes]:
    """The files the candidate.frozen event at `seq` names (ValueError when unreadable)."""
    (event,) = await lab.events.read(run_id, after=seq - 1, before=seq + 1) or (None,)
    if event is None or event.kind != "candidate.frozen":
        raise ValueError("the candidate's frozen event is not in this run")
    refs = event.blob_refs()
    if not refs:
        raise ValueError("the frozen event names no source archive")
    try:
        files = unpack_files(lab.blobs.get(refs[0]))
    except FileNotFoundError:
        raise ValueError(f"the source archive {refs[0][:12]} is not in this lab") from None
    except (ValueError, TypeError, AttributeError, binascii.Error):
        raise ValueError("the source archive cannot be read") from None
    return files


def unified(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[str, bool]:
    """The unified diff of every file (a/ = parent, b/ = candidate), and whether it was
    clipped at MAX_DIFF_CHARS."""
    parts: list[str] = []
    size = 0
    for rel in sorted(set(old) | set(new)):
        a, b = old.get(rel), new.get(rel)
        if a == b:
            continue
        left = [] if a is None else a.decode("utf-8", "replace").splitlines(keepends=True)
        right = [] if b is None else b.decode("utf-8", "replace").splitlines(keepends=True)
        for line in difflib.unified_diff(
            left,
            right,
            "/dev/null" if a is None else f"a/{rel}",
            "/dev/null" if b is None else f"b/{rel}",
        ):
            text = line if line.endswith("\n") else line + "\n"
            size += len(text)
            if size > MAX_DIFF_CHARS:
                return "".join(parts), True
            parts.append(text)
    return "".join(parts), False


async def diff_against(lab: Lab, run_id: str, seq: int, parent_seq: int | None) -> dict[str, Any]:
    """The candidate's diff against its parent (against nothing for a root)."""
    try:
        new = await frozen_archive(lab, run_id, seq)
        old = {} if parent_seq is None else await frozen_archive(lab, run_id, parent_seq)
    except ValueError as exc:
        return {"text": None, "clipped": False, "error": str(exc)}
    text, clipped = unified(old, new)
    return {"text": text, "clipped": clipped, "error": None, "files": sorted(new)}


def _receipt_of(event: Event) -> dict[str, Any] | None:
    payload = event.payload
    body = payload.get("receipt") if event.kind == "experiment.receipt" else payload
    return body if isinstance(body, dict) else None


async def receipt(
    lab: Lab, run_id: str, team: str | None, receipt_key: str | None, at: int | None
) -> dict[str, Any] | None:
    """The summary of the receipt the candidate was frozen with (its newest event naming
    that receipt id), and the blob of the full receipt."""
    if not receipt_key or team is None:
        return None
    before = _before(at)
    while True:
        page = await lab.events.read(
            run_id, kinds=RECEIPT_KINDS, team=team, before=before, newest_first=True, limit=PAGE
        )
        for event in page:
            body = _receipt_of(event)
            if body is not None and body.get("receipt_id") == receipt_key:
                refs = event.blob_refs()
                keep = (
                    "receipt_id", "status", "mode", "cases_run", "cases_passed",
                    "total_est_cycles", "cycles", "source_sha256",
                )  # fmt: skip
                return {
                    **{k: body.get(k) for k in keep},
                    "seq": event.seq,
                    "ts": event.ts,
                    "blob": refs[0] if refs else None,
                }
        if len(page) < PAGE:
            return None
        before = page[-1].seq


async def messages(
    lab: Lab, index: MentionIndex, run_id: str, candidate_id: str, at: int | None
) -> list[dict[str, Any]]:
    """The board messages that carried the candidate, oldest first: those whose payload names
    it (the share of a new best, the Judger's feedback; kept by this lab's board) and the
    a2a.message events whose summary names it (all an imported run has)."""
    found: dict[str, dict[str, Any]] = {}
    if at is None:
        for message in await BoardStore(lab.db).messages(run_id):
            if message.payload.get("candidate_id") != candidate_id:
                continue
            summary = message.payload.get("summary") or message.payload.get("text") or ""
            code, params = coded_summary(message.sender, message.payload)
            found[message.id] = {
                "message_id": message.id,
                "ts": message.created_at,
                "sender": message.sender,
                "to": message.recipient,
                "type": message.type,
                "summary": str(summary)[:300],
                "summary_code": code,
                "summary_params": params,
            }
    for row in await index.mentions(run_id, candidate_id):
        if (at is None or row["seq"] <= at) and row["message_id"] not in found:
            found[row["message_id"]] = row
    return sorted(found.values(), key=lambda m: str(m["ts"]))[:MAX_MESSAGES]


def points_summary(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest official result in short: status, points passed of all, prof sum."""
    if not results:
        return None
    last = results[-1]
    points = last.get("points") or []
    return {
        "status": last.get("status"),
        "passed": sum(1 for p in points if isinstance(p, dict) and p.get("passed") is True),
        "points": len(points),
        "prof_sum_us": last.get("prof_sum_us"),
    }


def dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
