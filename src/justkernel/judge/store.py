"""The local judge's own state in one SQLite file: submissions, their results, best times.

Kept apart from the lab's database on purpose: the judge is another service with its own
folder. Submissions keep their files (the evidence of what was judged), so a queued or
interrupted submission survives a restart (`requeue_interrupted`) and is evaluated then. The
best time of a point is updated in the transaction that stores a result: they never disagree.
A result is kept exact (for the judge's operator); clients get `public.Publisher`'s view
of it, whose best times are the best published ones (`public_best_times`), never exact ones.

Each submission records the toolchain it named (`toolchain`; rows from before targets existed
were all evaluated on the C port: 'cpu'). Best times are kept per operator and target
(`best_times_key`): a callgrind time and a per-pipe model time do not compare.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.evaluation.protocol import SubmissionStatus

_SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL,
    operator TEXT NOT NULL,
    idempotency_key TEXT,
    status TEXT NOT NULL,
    quota_day TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    source_sha256 TEXT NOT NULL,
    files TEXT,
    client TEXT NOT NULL,
    result TEXT,
    error TEXT,
    toolchain TEXT NOT NULL DEFAULT 'cpu',
    UNIQUE (account, idempotency_key)
);
CREATE INDEX IF NOT EXISTS submissions_day ON submissions (account, quota_day);
CREATE INDEX IF NOT EXISTS submissions_status ON submissions (status, seq);
CREATE TABLE IF NOT EXISTS best_times (
    operator TEXT NOT NULL,
    point_id TEXT NOT NULL,
    best_time_us REAL NOT NULL,
    submission_id TEXT NOT NULL,
    PRIMARY KEY (operator, point_id)
);
CREATE TABLE IF NOT EXISTS public_best_times (
    operator TEXT NOT NULL,
    point_id TEXT NOT NULL,
    best_time_us REAL NOT NULL,
    submission_id TEXT NOT NULL,
    PRIMARY KEY (operator, point_id)
);
"""


def best_times_key(operator: str, toolchain: str) -> str:
    """The best-time tables' `operator` key of a target: the operator's name for `cpu` (the
    key every best time had before targets existed, so those stay the C port's), else
    `<operator>@<toolchain>`."""
    return operator if toolchain == "cpu" else f"{operator}@{toolchain}"


@dataclass(frozen=True)
class StoredSubmission:
    id: str
    account: str
    operator: str
    status: SubmissionStatus
    quota_day: str
    submitted_at: str
    started_at: str | None
    finished_at: str | None
    source_sha256: str
    client: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    toolchain: str = "cpu"

    @classmethod
    def of(cls, row: sqlite3.Row) -> StoredSubmission:
        return cls(
            id=row["id"],
            account=row["account"],
            operator=row["operator"],
            status=SubmissionStatus(row["status"]),
            quota_day=row["quota_day"],
            submitted_at=row["submitted_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            source_sha256=row["source_sha256"],
            client=json.loads(row["client"]),
            result=json.loads(row["result"]) if row["result"] else None,
            error=row["error"],
            toolchain=row["toolchain"],
        )


class JudgeStore:
    """Thread-safe access to the judge database (one connection, one lock: calls are short)."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(_SCHEMA)  # its own transaction
            columns = {r["name"] for r in self._db.execute("PRAGMA table_info(submissions)")}
            if "toolchain" not in columns:  # a judge database from before targets existed
                self._db.execute(
                    "ALTER TABLE submissions ADD COLUMN toolchain TEXT NOT NULL DEFAULT 'cpu'"
                )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- submissions ------------------------------------------------------------------------
    def add(
        self,
        *,
        account: str,
        operator: str,
        quota_day: str,
        submitted_at: str,
        source_sha256: str,
        files: Mapping[str, bytes],
        client: Mapping[str, Any],
        idempotency_key: str | None,
        daily_limit: int,
        toolchain: str,
    ) -> tuple[StoredSubmission | None, bool]:
        """Queue a submission unless the day's quota is used: (submission, created).

        A repeated idempotency key returns the earlier submission (created False); a full
        quota returns (None, False). Checked and inserted in one transaction.
        """
        encoded = json.dumps({k: base64.b64encode(v).decode() for k, v in files.items()})
        with self._tx() as db:
            if idempotency_key is not None:
                row = db.execute(
                    "SELECT * FROM submissions WHERE account = ? AND idempotency_key = ?",
                    (account, idempotency_key),
                ).fetchone()
                if row is not None:
                    return StoredSubmission.of(row), False
            if self._used(db, account, quota_day) >= daily_limit:
                return None, False
            sid = f"sub-{secrets.token_hex(8)}"
            db.execute(
                "INSERT INTO submissions (id, account, operator, idempotency_key, status, "
                "quota_day, submitted_at, source_sha256, files, client, toolchain) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sid,
                    account,
                    operator,
                    idempotency_key,
                    SubmissionStatus.QUEUED.value,
                    quota_day,
                    submitted_at,
                    source_sha256,
                    encoded,
                    json.dumps(dict(client)),
                    toolchain,
                ),
            )
            row = db.execute("SELECT * FROM submissions WHERE id = ?", (sid,)).fetchone()
            return StoredSubmission.of(row), True

    @staticmethod
    def _used(db: sqlite3.Connection, account: str, quota_day: str) -> int:
        row = db.execute(
            "SELECT COUNT(*) FROM submissions WHERE account = ? AND quota_day = ?",
            (account, quota_day),
        ).fetchone()
        return int(row[0])

    def used(self, account: str, quota_day: str) -> int:
        with self._lock:
            return self._used(self._db, account, quota_day)

    def get(self, submission_id: str) -> StoredSubmission | None:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM submissions WHERE id = ?", (submission_id,)
            ).fetchone()
        return None if row is None else StoredSubmission.of(row)

    def recent(self, account: str, limit: int = 50) -> list[StoredSubmission]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM submissions WHERE account = ? ORDER BY seq DESC LIMIT ?",
                (account, limit),
            ).fetchall()
        return [StoredSubmission.of(r) for r in rows]

    def files(self, submission_id: str) -> dict[str, bytes]:
        with self._lock:
            row = self._db.execute(
                "SELECT files FROM submissions WHERE id = ?", (submission_id,)
            ).fetchone()
        if row is None or row["files"] is None:
            return {}
        return {k: base64.b64decode(v) for k, v in json.loads(row["files"]).items()}

    # -- the queue ----------------------------------------------------------------------------
    def next_queued(self) -> StoredSubmission | None:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM submissions WHERE status = ? ORDER BY seq LIMIT 1",
                (SubmissionStatus.QUEUED.value,),
            ).fetchone()
        return None if row is None else StoredSubmission.of(row)

    def mark_running(self, submission_id: str, started_at: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE submissions SET status = ?, started_at = ? WHERE id = ?",
                (SubmissionStatus.RUNNING.value, started_at, submission_id),
            )

    def requeue_interrupted(self) -> int:
        """Submissions a stopped judge left running go back to the queue."""
        with self._tx() as db:
            cur = db.execute(
                "UPDATE submissions SET status = ?, started_at = NULL WHERE status = ?",
                (SubmissionStatus.QUEUED.value, SubmissionStatus.RUNNING.value),
            )
            return cur.rowcount

    def finish(
        self,
        submission_id: str,
        operator: str,
        result: dict[str, Any],
        finished_at: str,
        public_times: Mapping[str, float] | None = None,
    ) -> dict[str, Any]:
        """Store a result; points that passed with a time update their best. Each point's
        `best_time_us` is then the best exact time over every submission so far (None if none
        timed) and `public_best_time_us` the best of the times clients were given."""
        exact = {
            p["id"]: p["time_us"]
            for p in result["points"]
            if p.get("passed") and p.get("time_us") is not None
        }
        with self._tx() as db:
            self._improve(db, "best_times", operator, submission_id, exact)
            self._improve(db, "public_best_times", operator, submission_id, public_times or {})
            best = self._best(db, operator)
            public = self._best(db, operator, "public_best_times")
            for point in result["points"]:
                point["best_time_us"] = best.get(point["id"])
                point["public_best_time_us"] = public.get(point["id"])
            db.execute(
                "UPDATE submissions SET status = ?, finished_at = ?, result = ? WHERE id = ?",
                (
                    SubmissionStatus.FINISHED.value,
                    finished_at,
                    json.dumps(result),
                    submission_id,
                ),
            )
        return result

    def fail(self, submission_id: str, error: str, finished_at: str) -> None:
        """The judge could not evaluate it (infrastructure, not the candidate): status error."""
        with self._tx() as db:
            db.execute(
                "UPDATE submissions SET status = ?, finished_at = ?, error = ? WHERE id = ?",
                (SubmissionStatus.ERROR.value, finished_at, error[:500], submission_id),
            )

    @staticmethod
    def _improve(
        db: sqlite3.Connection,
        table: str,
        operator: str,
        submission_id: str,
        times: Mapping[str, float],
    ) -> None:
        for point_id, t in times.items():
            db.execute(
                f"INSERT INTO {table} VALUES (?, ?, ?, ?) "
                "ON CONFLICT (operator, point_id) DO UPDATE SET "
                "best_time_us = excluded.best_time_us, "
                "submission_id = excluded.submission_id "
                f"WHERE excluded.best_time_us < {table}.best_time_us",
                (operator, point_id, t, submission_id),
            )

    @staticmethod
    def _best(db: sqlite3.Connection, operator: str, table: str = "best_times") -> dict[str, float]:
        rows = db.execute(
            f"SELECT point_id, best_time_us FROM {table} WHERE operator = ?", (operator,)
        ).fetchall()
        return {r["point_id"]: float(r["best_time_us"]) for r in rows}

    def best_times(self, operator: str) -> dict[str, float]:
        with self._lock:
            return self._best(self._db, operator)
