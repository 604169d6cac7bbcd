"""Frozen candidates: immutable snapshots of sources that passed every local case and the
cycle simulation, with the receipt that says so (or, under the official-driven strategy,
sources that compiled but failed local precision, marked `local_passed = false`).

The frozen archive holds the editable files exactly as evaluated (canonical JSON of
path → base64 content, stored in the blob store by SHA-256), so the Judger re-reads the very
bytes the receipt names and never the team's moving workspace.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterable
from typing import Any, Protocol

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from justkernel.core.events import EventPayload
from justkernel.core.events.collab import CandidateFrozen
from justkernel.core.records.candidates import Candidate
from justkernel.core.relpath import relpath_problem
from justkernel.core.statuses import CandidateStatus
from justkernel.store.blobs import BlobStore
from justkernel.store.database import Database, where_given
from justkernel.store.lineage import ParentOption, closest_parent
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import candidates


class EventAppender(Protocol):
    """What the store needs of the event log: one deduplicated append (the log sits above
    the store, so it is passed in, never imported)."""

    async def append(
        self,
        run_id: str,
        kind: str | EventPayload,
        payload: dict[str, Any] | None = None,
        team: str | None = None,
        *,
        dedup_key: str | None = None,
    ) -> Any: ...


class FrozenReceipt(Protocol):
    """The receipt fields a frozen candidate keeps (`core.receipts.Receipt` has them)."""

    job_key: str
    source_sha256: str
    total_est_cycles: int | None

    @property
    def status(self) -> str: ...


def pack_files(files: dict[str, bytes]) -> bytes:
    body = {rel: base64.b64encode(data).decode("ascii") for rel, data in sorted(files.items())}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def unpack_files(archive: bytes) -> dict[str, bytes]:
    body = json.loads(archive)
    return {rel: base64.b64decode(data) for rel, data in body.items()}


_STATUSES = frozenset(CandidateStatus)
# the team's own candidates a new one is compared with: the most recent ones (a long run's
# hundredth candidate comes from a recent one, and each comparison reads and diffs a source)
MAX_OWN_PARENTS = 40
MAX_ADOPTED_PARENTS = 20


class CandidateStore:
    """The candidates of every run (table `candidates`) and their frozen archives."""

    def __init__(self, db: Database, events: EventAppender, blobs: BlobStore) -> None:
        self._db = db
        self._events = events
        self._blobs = blobs

    async def freeze(
        self,
        run_id: str,
        team_id: str,
        files: dict[str, bytes],
        receipt: FrozenReceipt,
        commit: str | None,
        fetched: Iterable[str] = (),
    ) -> tuple[Candidate, bool]:
        """Freeze an evaluated source (once per source in a run); returns (candidate, new).
        A file path git could read as its own (or any unsafe path) is refused: frozen sources
        travel to other teams' workspaces and to the judge. `fetched` names the public
        candidates the team fetched (other teams' ids of this run count, the rest is
        ignored); the parent is the closest of those and the team's own (`store.lineage`)."""
        refused = [f"{rel}: {why}" for rel in files if (why := relpath_problem(rel)) is not None]
        if refused:
            raise ValueError("refusing to freeze unsafe paths: " + "; ".join(refused))
        existing = await self.by_source(run_id, receipt.source_sha256)
        if existing is not None:  # announced again: a crash may have come before the event
            await self._announce(existing)
            return existing, False
        parent = await self._parent(run_id, team_id, files, fetched)
        blob = self._blobs.put(pack_files(files))
        now = utc_now_iso()
        candidate_id = f"cand-{receipt.source_sha256[:12]}"
        try:
            await self._db.write(
                insert(candidates).values(
                    run_id=run_id,
                    id=candidate_id,
                    team_id=team_id,
                    source_sha256=receipt.source_sha256,
                    archive_blob=blob,
                    commit=commit,
                    receipt_key=receipt.job_key,
                    cycles_sum=receipt.total_est_cycles,
                    local_passed=receipt.status == "measured",
                    status=CandidateStatus.FROZEN,
                    review=None,
                    created_at=now,
                    updated_at=now,
                    parent_id=parent.candidate_id if parent else None,
                    parent_kind=parent.kind if parent else None,
                )
            )
        except IntegrityError:
            stored = await self.by_source(run_id, receipt.source_sha256)
            assert stored is not None
            return stored, False
        candidate = await self.get(run_id, candidate_id)
        await self._announce(candidate)
        return candidate, True

    async def _parent(
        self, run_id: str, team_id: str, files: dict[str, bytes], fetched: Iterable[str]
    ) -> ParentOption | None:
        """The earlier candidate `files` is closest to, among the team's own recent ones and
        the other teams' candidates it fetched (ids are checked against this run's store)."""
        every = await self.list(run_id)
        wanted = set(fetched)
        own = [c for c in every if c.team_id == team_id][-MAX_OWN_PARENTS:]
        adopted = [c for c in every if c.id in wanted and c.team_id != team_id]
        options = [
            ParentOption(c.id, kind, c.created_at, self.files(c))
            for kind, group in (("own", own), ("adopted", adopted[-MAX_ADOPTED_PARENTS:]))
            for c in group
        ]
        if not options:
            return None
        return await asyncio.to_thread(closest_parent, files, options)

    async def _announce(self, candidate: Candidate) -> None:
        """The candidate.frozen event, once per candidate (deduplicated)."""
        await self._events.append(
            candidate.run_id,
            CandidateFrozen(
                candidate_id=candidate.id,
                source_sha256=candidate.source_sha256,
                commit=candidate.commit,
                receipt_key=candidate.receipt_key,
                cycles_sum=candidate.cycles_sum,
                local_passed=candidate.local_passed,
                parent_id=candidate.parent_id,
                parent_kind=candidate.parent_kind,
                blobs=[candidate.archive_blob],
            ),
            team=candidate.team_id,
            dedup_key=f"candidate.frozen:{candidate.id}",
        )

    async def by_source(self, run_id: str, source_sha256: str) -> Candidate | None:
        return await self._db.record(
            Candidate,
            select(candidates).where(
                candidates.c.run_id == run_id,
                candidates.c.source_sha256 == source_sha256,
            ),
        )

    async def get(self, run_id: str, candidate_id: str) -> Candidate:
        found = await self._db.record(
            Candidate,
            select(candidates).where(
                candidates.c.run_id == run_id, candidates.c.id == candidate_id
            ),
        )
        if found is None:
            raise LookupError(f"no candidate {candidate_id}")
        return found

    async def list(
        self,
        run_id: str,
        *,
        status: CandidateStatus | str | None = None,
        team_id: str | None = None,
    ) -> list[Candidate]:
        query = where_given(
            select(candidates).where(candidates.c.run_id == run_id),
            (candidates.c.status, status),
            (candidates.c.team_id, team_id),
        )
        return await self._db.records(Candidate, query.order_by(candidates.c.created_at))

    async def set_status(
        self,
        run_id: str,
        candidate_id: str,
        status: CandidateStatus | str,
        review: dict[str, Any] | None = None,
    ) -> None:
        if status not in _STATUSES:
            raise ValueError(f"unknown candidate status {status!r}")
        values: dict[str, Any] = {"status": status, "updated_at": utc_now_iso()}
        if review is not None:
            values["review"] = review
        await self._db.write(
            update(candidates)
            .where(candidates.c.run_id == run_id, candidates.c.id == candidate_id)
            .values(values)
        )

    async def transition(
        self,
        run_id: str,
        candidate_id: str,
        before: CandidateStatus | str,
        after: CandidateStatus | str,
    ) -> bool:
        """Move a candidate from `before` to `after` only if it is still `before`: of two
        racing decisions (a double click, the CLI and the dashboard) exactly one wins."""
        if after not in _STATUSES:
            raise ValueError(f"unknown candidate status {after!r}")
        moved = await self._db.write(
            update(candidates)
            .where(
                candidates.c.run_id == run_id,
                candidates.c.id == candidate_id,
                candidates.c.status == before,
            )
            .values(status=after, updated_at=utc_now_iso())
        )
        return bool(moved.rowcount)

    def files(self, candidate: Candidate) -> dict[str, bytes]:
        """The frozen bytes, verified against their SHA-256 by the blob store."""
        return unpack_files(self._blobs.get(candidate.archive_blob))
