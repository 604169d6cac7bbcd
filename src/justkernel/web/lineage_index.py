"""Which a2a.message events name which candidate, per run, kept as the log grows.

A node's panel lists the messages that carried it; scanning every message of a long run for
each panel (and again after each new event, as answers are cached per event) cost a page read
per thousand messages. The log is append-only, so each run's mentions are read once, from the
last event seen on (as `pipeline_api.PipelineViews.referenced` does for receipts).
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from justkernel.lab import Lab

CANDIDATE_ID = re.compile(r"cand-[0-9a-f]{12}")
MAX_RUNS = 16
PAGE = 2000


@dataclass
class _Mentions:
    last_seq: int = 0
    by_candidate: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


class MentionIndex:
    """Messages by the candidate ids their summaries name, for the runs read lately."""

    def __init__(self, lab: Lab) -> None:
        self._lab = lab
        self._runs: OrderedDict[str, _Mentions] = OrderedDict()
        self._lock = asyncio.Lock()

    async def mentions(self, run_id: str, candidate_id: str) -> list[dict[str, Any]]:
        """The a2a.message events (as panel rows, with `seq`) whose summary names the id."""
        async with self._lock:
            run = await self._lab.runs.get(run_id)
            index = self._runs.pop(run_id, None) or _Mentions()
            self._runs[run_id] = index
            while len(self._runs) > MAX_RUNS:
                self._runs.popitem(last=False)
            while index.last_seq < run.last_seq:
                page = await self._lab.events.read(
                    run_id,
                    after=index.last_seq,
                    before=run.last_seq + 1,
                    kinds=["a2a.message"],
                    limit=PAGE,
                )
                for event in page:
                    summary = event.payload.get("summary")
                    if not isinstance(summary, str):
                        continue
                    row = {
                        "message_id": str(event.payload.get("message_id") or f"seq-{event.seq}"),
                        "seq": event.seq,
                        "ts": event.ts,
                        "sender": event.team or event.payload.get("sender"),
                        "to": event.payload.get("to"),
                        "type": event.payload.get("type"),
                        "summary": summary[:300],
                        "summary_code": event.payload.get("summary_code"),
                        "summary_params": event.payload.get("summary_params"),
                    }
                    for named in set(CANDIDATE_ID.findall(summary)):
                        index.by_candidate.setdefault(named, []).append(row)
                index.last_seq = page[-1].seq if len(page) == PAGE else run.last_seq
            return list(index.by_candidate.get(candidate_id, []))
