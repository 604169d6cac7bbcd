"""The lab's submissions to a judge (table `submissions`): every statement the Judger runs on
them, as typed methods, so the rules of the table live in one place.

The submit window is safe against a crash: a row is reserved with a fresh idempotency key
*before* its source is sent, and every try sends that key. A lab killed after the judge took
the POST but before the answer was recorded finds the row still `submitting` (`in_window`) and
sends it again under the same key. A source goes to one backend once, in any run (the table's
unique constraint), and the daily quota counts a backend's rows of the day over every run.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import and_, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.core.records.submissions import Submission
from justkernel.core.statuses import SubmissionStatus
from justkernel.store.database import Database, where_given
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import candidates, submissions


class SubmissionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- the submit window ------------------------------------------------------------------
    async def reserve(
        self,
        run_id: str,
        *,
        candidate_id: str,
        team_id: str,
        source_sha256: str,
        backend: str,
        day: str,
    ) -> Submission | None:
        """Reserve a source for a backend with a fresh key; None when the backend already has
        a row for it (the lab never sends a source twice to one backend, in any run)."""
        row = {
            "id": f"pending-{source_sha256[:16]}-{backend}",
            "run_id": run_id,
            "candidate_id": candidate_id,
            "team_id": team_id,
            "source_sha256": source_sha256,
            "backend": backend,
            "day": day,
            "status": SubmissionStatus.SUBMITTING,
            "result": None,
            "submitted_at": utc_now_iso(),
            "idempotency_key": uuid.uuid4().hex,
        }
        try:
            await self._db.write(insert(submissions).values(row))
        except IntegrityError:
            return None
        return Submission.from_row(row)

    async def in_window(self, run_id: str, backend: str) -> list[Submission]:
        """Rows reserved and maybe sent, whose answer was never recorded."""
        return await self.list(run_id, backend=backend, status=SubmissionStatus.SUBMITTING)

    async def record_sent(self, reserved: Submission, submission_id: str) -> None:
        """The judge's answer: the row takes the judge's id and waits for the result."""
        await self._db.write(
            update(submissions)
            .where(
                submissions.c.id == reserved.id,
                submissions.c.status == SubmissionStatus.SUBMITTING,
            )
            .values(id=submission_id, status=SubmissionStatus.SUBMITTED)
        )

    async def mark_unknown(self, reserved: Submission) -> None:
        """A row without a key cannot be sent again safely: it is left for a human."""
        await self._db.write(
            update(submissions)
            .where(submissions.c.id == reserved.id)
            .values(status=SubmissionStatus.UNKNOWN)
        )

    async def drop(self, reserved: Submission) -> None:
        """The judge refused the submission for sure: the source may be sent again later."""
        await self._db.write(delete(submissions).where(submissions.c.id == reserved.id))

    # -- results ------------------------------------------------------------------------------
    async def record_result(
        self, submission_id: str, status: SubmissionStatus, result: dict[str, Any]
    ) -> None:
        """The official verdict of a submitted row (official_pass or official_fail)."""
        await self._db.write(
            update(submissions)
            .where(submissions.c.id == submission_id)
            .values(status=status, result=result, finished_at=utc_now_iso())
        )

    # -- reading ------------------------------------------------------------------------------
    async def list(
        self,
        run_id: str,
        *,
        backend: str | None = None,
        status: SubmissionStatus | None = None,
    ) -> list[Submission]:
        """A run's rows, oldest first."""
        query = where_given(
            select(submissions).where(submissions.c.run_id == run_id),
            (submissions.c.backend, backend),
            (submissions.c.status, status),
        )
        return await self._db.records(Submission, query.order_by(submissions.c.submitted_at))

    async def count_on_day(self, backend: str, day: str, *, unverified_only: bool = False) -> int:
        """A backend's rows of one quota day, over every run; `unverified_only`: only those of
        candidates that did not pass local precision (the official-driven allowance)."""
        query = select(func.count()).where(
            submissions.c.backend == backend, submissions.c.day == day
        )
        if unverified_only:
            joined = submissions.join(
                candidates,
                and_(
                    candidates.c.run_id == submissions.c.run_id,
                    candidates.c.id == submissions.c.candidate_id,
                ),
            )
            query = query.select_from(joined).where(candidates.c.local_passed.is_(False))
        else:
            query = query.select_from(submissions)
        return await self._db.scalar(query)

    async def sources(self, backend: str) -> set[str]:
        """Every source already sent (or reserved) to a backend, in any run."""
        rows = await self._db.fetch_all(
            select(submissions.c.source_sha256).where(submissions.c.backend == backend)
        )
        return {r.source_sha256 for r in rows}
