"""The official evaluation behind one interface: submit a bundle, get an id, poll for results.

Two backends speak it: `local` (our `justkernel judge-server`, hidden cases, same API shape)
and `official` (the contest site, by configuration). Both are `HttpJudgeClient`s; the Judger
only sees `EvaluationClient`. Figures the judge did not give stay `None`, never 0, and results
from here are official results: they never mix with local receipts.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from io import BytesIO
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.operators import OperatorDefinition


class SubmissionStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"  # evaluated: every point has a verdict (possibly all failed)
    ERROR = "error"  # the judge could not evaluate (infrastructure), not the candidate's fault

    @property
    def done(self) -> bool:
        return self in (SubmissionStatus.FINISHED, SubmissionStatus.ERROR)


@dataclass(frozen=True)
class CandidateBundle:
    """What goes to the judge: the editable source files of one frozen candidate.

    `source_sha256` names the files (the same hash as a receipt's); the judge recomputes it and
    refuses a bundle whose files do not match. `toolchain` is the target the files are written
    for (`core.targets`): "ascendc-cpu" (the Ascend C project, the default) or "cpu" (the C
    port); the judge checks the files against that target's editable paths and evaluates them
    with that toolchain.
    """

    operator: str
    files: Mapping[str, bytes] = field(repr=False)
    source_sha256: str
    team: str | None = None
    candidate_id: str | None = None
    note: str = ""
    toolchain: str = DEFAULT_TOOLCHAIN

    @classmethod
    def create(
        cls,
        operator: str,
        files: Mapping[str, bytes],
        *,
        team: str | None = None,
        candidate_id: str | None = None,
        note: str = "",
        toolchain: str = DEFAULT_TOOLCHAIN,
    ) -> CandidateBundle:
        files = dict(sorted(files.items()))
        sha = editable_tree_sha256(files)
        return cls(operator, files, sha, team, candidate_id, note, toolchain)

    @classmethod
    def from_project(
        cls,
        folder: Path,
        definition: OperatorDefinition,
        *,
        toolchain: str = DEFAULT_TOOLCHAIN,
        **meta: Any,
    ) -> CandidateBundle:
        """The editable files of a project folder for `toolchain` (links and build output left
        out); `definition` is the operator's own (its view for the target is taken here)."""
        folder = Path(folder)
        definition = definition.for_toolchain(toolchain)
        files = {}
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not path.is_file() or rel.split("/")[0] in (".git", "build"):
                continue
            if definition.paths.access(rel) == "editable":
                files[rel] = path.read_bytes()
        return cls.create(definition.name, files, toolchain=toolchain, **meta)

    def to_zip(self) -> bytes:
        """The contest's upload format: a ZIP of the source files, fixed timestamps."""
        out = BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, data in sorted(self.files.items()):
                zf.writestr(zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0)), data)
        return out.getvalue()

    def client_metadata(self) -> dict[str, Any]:
        return {"team": self.team, "candidate_id": self.candidate_id, "note": self.note}


@dataclass(frozen=True)
class PointResult:
    """One hidden test point as the judge reported it; None where it gave nothing. The local
    judge gives no exact ratio and only noised, rounded times (docs/judge-api.md)."""

    id: str
    passed: bool
    error_ratio: float | None = None  # the official site's figure, if it gives one
    time_us: float | None = None
    best_time_us: float | None = None
    outcome: str | None = None  # passed, incorrect, timeout, crashed, not_run, compile_failed...
    error_bucket: str | None = None  # the local judge's coarse label of a failing point


@dataclass(frozen=True)
class OfficialResult:
    """The judge's answer about one submission; `raw` is its JSON exactly as received."""

    submission_id: str
    status: SubmissionStatus
    points: tuple[PointResult, ...] = ()
    prof_sum_us: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        """An official pass: evaluated, and every point passed."""
        return (
            self.status is SubmissionStatus.FINISHED
            and bool(self.points)
            and all(p.passed for p in self.points)
        )


@dataclass(frozen=True)
class QuotaInfo:
    used: int
    limit: int
    resets_at: datetime | None = None

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


class JudgeError(RuntimeError):
    """Any failure talking to a judge. Messages are safe to log: never a token."""


class JudgeAuthError(JudgeError):
    """Login refused, or the token was rejected even after logging in again."""


class JudgeQuotaError(JudgeError):
    """The daily submission quota is used up; retrying today will not help."""

    def __init__(self, message: str, quota: QuotaInfo | None = None) -> None:
        super().__init__(message)
        self.quota = quota


class JudgeRateLimited(JudgeError):
    """Too many requests; still limited after the bounded retries (see `retry_after`)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JudgeUnavailable(JudgeError):
    """The judge cannot be reached or keeps failing (connection errors, 5xx)."""


class JudgeRejected(JudgeError):
    """The judge refused the request itself (a bad bundle: traversal, forbidden file, size)."""


class JudgeNotFound(JudgeError):
    """No such submission."""


@runtime_checkable
class EvaluationClient(Protocol):
    """Submit a candidate bundle, get a submission id, poll until per-point results arrive."""

    backend: str  # "local" or "official": results are labelled with it

    async def submit(self, bundle: CandidateBundle, *, idempotency_key: str | None = None) -> str:
        """Upload `bundle` under `idempotency_key` (a fresh one when None), the same on every
        retry; the submission id. Raises the typed JudgeErrors above."""
        ...

    async def resubmit(self, bundle: CandidateBundle, *, idempotency_key: str) -> str:
        """The submission an earlier `submit` under this key may have made, whose answer was
        lost (a crash): found, or sent now; never a second one for a judge that keeps keys."""
        ...

    async def result(self, submission_id: str) -> OfficialResult:
        """The submission as it stands now (queued, running, finished or error)."""
        ...

    async def wait(
        self, submission_id: str, *, max_seconds: float = 600.0, poll_seconds: float = 1.0
    ) -> OfficialResult:
        """Poll until the submission is finished or failed; JudgeError after max_seconds."""
        ...

    async def quota(self) -> QuotaInfo | None:
        """Today's usage, when the judge reports it."""
        ...

    async def aclose(self) -> None: ...
