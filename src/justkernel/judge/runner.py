"""The judge's queue: one submission at a time, oldest first, straight from the store.

The store is the queue, so nothing is lost when the judge stops: a submission left `running`
goes back to `queued` at the next start and is evaluated again (same source, same points,
same answer; usually a cache hit). A candidate's failure is a finished result with failed
points; only an infrastructure failure gives status `error`, with a message that names the
kind of failure and nothing of the host (paths there would name the judge's folders). Each
submission is evaluated with the toolchain it named; best times are kept per target (two cycle
models' times do not compare).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from justkernel.judge.eval import JudgeEvaluation
from justkernel.judge.public import Publisher
from justkernel.judge.store import JudgeStore, best_times_key

log = logging.getLogger("justkernel.judge")


class JudgeRunner:
    def __init__(
        self,
        store: JudgeStore,
        evaluation: JudgeEvaluation,
        clock: Callable[[], datetime],
        publisher: Publisher,
    ) -> None:
        self.store = store
        self.publisher = publisher
        self.evaluation = evaluation
        self.clock = clock
        self._wake = asyncio.Event()
        self.evaluated = 0

    def notify(self) -> None:
        """A submission was queued: wake the loop if it sleeps."""
        self._wake.set()

    def _now(self) -> str:
        return self.clock().isoformat()

    async def run(self) -> None:
        """Evaluate queued submissions until cancelled (cancelling leaves one `running`,
        which the next start requeues)."""
        requeued = self.store.requeue_interrupted()
        if requeued:
            log.info("requeued %d interrupted submission(s)", requeued)
        while True:
            self._wake.clear()
            sub = self.store.next_queued()
            if sub is None:
                await self._wake.wait()
                continue
            self.store.mark_running(sub.id, self._now())
            try:
                files = self.store.files(sub.id)
                result = await self.evaluation.evaluate(files, toolchain=sub.toolchain)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # infrastructure: the candidate is not to blame
                log.exception("submission %s could not be evaluated", sub.id)
                message = f"{type(exc).__name__}: the judge could not evaluate this submission"
                self.store.fail(sub.id, message, self._now())
            else:
                public = self.publisher.times(result, sub.source_sha256)
                board = best_times_key(sub.operator, sub.toolchain)
                self.store.finish(sub.id, board, result, self._now(), public)
            self.evaluated += 1
