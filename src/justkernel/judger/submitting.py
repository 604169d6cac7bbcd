"""The submit window, safe against a crash: a submission is reserved in the database with a
fresh idempotency key *before* it is sent, and every try sends that key.

A lab killed after the judge accepted the POST but before it recorded the answer finds the row
still `submitting` when it resumes, and sends it again under the same key: the judge answers
with the submission it already holds (nothing queued or counted twice), and the normal path
follows (poll, official result, feedback). For a judge that does not honour the key, the
client looks the submission up before it sends anything (`EvaluationClient.resubmit`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.evaluation.protocol import EvaluationClient
from justkernel.judger.candidates import Candidate
from justkernel.lab import Lab
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import submissions


@dataclass(frozen=True)
class Reservation:
    """A submission row in `submitting`: its placeholder id and the key it is sent with
    (None only for rows reserved before keys were stored)."""

    row_id: str
    candidate_id: str
    idempotency_key: str | None


class SubmissionRows:
    """The Judger's submission rows of one run for one backend, in the submit window."""

    def __init__(self, lab: Lab, run_id: str, client: EvaluationClient) -> None:
        self._lab = lab
        self._run_id = run_id
        self._backend = client.backend

    async def reserve(self, cand: Candidate, day: str) -> Reservation | None:
        """Reserve the candidate's source for this backend; None when it already has a row
        (the lab never sends a source twice to one backend, in any run)."""
        placeholder = f"pending-{cand.source_sha256[:16]}-{self._backend}"
        key = uuid.uuid4().hex
        try:
            async with self._lab.db.writer.begin() as conn:
                await conn.execute(
                    insert(submissions).values(
                        id=placeholder,
                        run_id=self._run_id,
                        candidate_id=cand.id,
                        team_id=cand.team_id,
                        source_sha256=cand.source_sha256,
                        backend=self._backend,
                        day=day,
                        status="submitting",
                        submitted_at=utc_now_iso(),
                        idempotency_key=key,
                    )
                )
        except IntegrityError:
            return None
        return Reservation(placeholder, cand.id, key)

    async def in_window(self) -> list[Reservation]:
        """Rows reserved and maybe sent, whose answer was never recorded."""
        async with self._lab.db.reader.connect() as conn:
            rows = (
                await conn.execute(
                    select(submissions)
                    .where(
                        submissions.c.run_id == self._run_id,
                        submissions.c.backend == self._backend,
                        submissions.c.status == "submitting",
                    )
                    .order_by(submissions.c.submitted_at)
                )
            ).all()
        return [Reservation(r.id, r.candidate_id, r.idempotency_key) for r in rows]

    async def record(self, reservation: Reservation, submission_id: str) -> None:
        """The judge's answer: the row takes the judge's id and waits for the result."""
        async with self._lab.db.writer.begin() as conn:
            await conn.execute(
                update(submissions)
                .where(
                    submissions.c.id == reservation.row_id,
                    submissions.c.status == "submitting",
                )
                .values(id=submission_id, status="submitted")
            )

    async def mark_unknown(self, reservation: Reservation) -> None:
        """A row without a key cannot be sent again safely: it is left for a human."""
        async with self._lab.db.writer.begin() as conn:
            await conn.execute(
                update(submissions)
                .where(submissions.c.id == reservation.row_id)
                .values(status="unknown")
            )

    async def drop(self, reservation: Reservation) -> None:
        """The judge refused the submission for sure: the source may be sent again later."""
        async with self._lab.db.writer.begin() as conn:
            await conn.execute(delete(submissions).where(submissions.c.id == reservation.row_id))
