"""Folded run states kept in memory, caught up from the store on each request.

A request costs one indexed read of the events after the last one folded, so the dashboard's
summaries stay fast however long the log grows. A replay scrubber asks for the state *at* a
sequence number: a cursor fold moves forward cheaply and restarts only when it moves back.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from justkernel.events import EventLog
from justkernel.reports.fold import RunState, fold_into
from justkernel.store import Run, RunRepository

log = logging.getLogger("justkernel.web.views")

MAX_RUNS = 16  # runs whose folds stay in memory (least recently used are dropped)
WARM_RUNS = 3  # the most recent runs are folded when the server starts


class RunViews:
    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._latest: OrderedDict[str, RunState] = OrderedDict()
        self._cursor: OrderedDict[str, RunState] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    @staticmethod
    def _remember(cache: OrderedDict[str, RunState], state: RunState) -> None:
        cache[state.run_id] = state
        cache.move_to_end(state.run_id)
        while len(cache) > MAX_RUNS:
            cache.popitem(last=False)

    async def state(self, run: Run, at: int | None = None) -> RunState:
        """The run as of its latest event (`run.last_seq`, read before the events, so the
        fold never skips one), or as of event `at` (a replay position)."""
        run_id = run.id
        if at is None or at >= run.last_seq:
            async with self._lock(f"latest:{run_id}"):
                state = self._latest.get(run_id) or RunState(run_id)
                await fold_into(self._log, state, run.last_seq)
                self._remember(self._latest, state)
                return state
        async with self._lock(f"cursor:{run_id}"):
            state = self._cursor.get(run_id)
            if state is None or state.last_seq > at:
                state = RunState(run_id)
            await fold_into(self._log, state, at)
            self._remember(self._cursor, state)
            return state

    async def warm(self, runs: RunRepository) -> None:
        """Fold the most recent runs in the background, so the first page is not the one
        that pays for reading a long log."""
        try:
            for run in (await runs.list())[:WARM_RUNS]:
                await self.state(run)
        except Exception:  # warming is an optimisation; a request will fold on demand
            log.debug("warming the run folds failed", exc_info=True)
