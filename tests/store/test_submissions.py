"""SubmissionStore on a real SQLite file and a real PostgreSQL database: the submit window
(reserve, answer, unknown, drop), one source per backend in any run, the day's quota over every
run, the official-driven allowance (joined with the candidates' local verdict), results."""

from __future__ import annotations

from dataclasses import dataclass

from justkernel.core.statuses import SubmissionStatus
from justkernel.lab import Lab
from justkernel.store.candidates import CandidateStore

DAY = "2026-12-01"


@dataclass(frozen=True)
class _Receipt:
    """The receipt fields a candidate keeps (a real Receipt needs a whole evaluation)."""

    job_key: str
    source_sha256: str
    total_est_cycles: int | None
    status: str


async def _candidate(lab: Lab, run_id: str, sha: str, *, passed: bool = True) -> str:
    store = CandidateStore(lab.db, lab.events, lab.blobs)
    receipt = _Receipt(
        f"job-{sha[:8]}", sha, 1000 if passed else None, "measured" if passed else "failed"
    )
    cand, _new = await store.freeze(run_id, "team-001", {"k.cpp": sha.encode()}, receipt, None)
    return cand.id


async def _reserve(lab: Lab, run_id: str, sha: str, backend: str = "local", day: str = DAY):
    return await lab.submissions.reserve(
        run_id,
        candidate_id=f"cand-{sha[:12]}",
        team_id="team-001",
        source_sha256=sha,
        backend=backend,
        day=day,
    )


async def test_the_submit_window_from_reservation_to_result(lab: Lab) -> None:
    run = await lab.runs.create("window")
    sha = "a" * 64
    reserved = await _reserve(lab, run.id, sha)
    assert reserved is not None
    assert reserved.status is SubmissionStatus.SUBMITTING
    assert reserved.id == f"pending-{sha[:16]}-local"
    assert reserved.idempotency_key and len(reserved.idempotency_key) == 32
    # a lab that died here finds the row again, with the key it must send
    (waiting,) = await lab.submissions.in_window(run.id, "local")
    assert (waiting.id, waiting.idempotency_key) == (reserved.id, reserved.idempotency_key)
    assert waiting.status is SubmissionStatus.SUBMITTING

    await lab.submissions.record_sent(reserved, "judge-sub-1")
    assert await lab.submissions.in_window(run.id, "local") == []
    (sent,) = await lab.submissions.list(run.id)
    assert (sent.id, sent.status, sent.result) == ("judge-sub-1", "submitted", None)
    assert sent.status.in_flight
    # the answer is recorded once: the placeholder no longer exists to be renamed again
    await lab.submissions.record_sent(reserved, "judge-sub-other")
    assert [s.id for s in await lab.submissions.list(run.id)] == ["judge-sub-1"]

    await lab.submissions.record_result(
        "judge-sub-1", SubmissionStatus.OFFICIAL_PASS, {"prof_sum_us": 12.5}
    )
    (done,) = await lab.submissions.list(run.id, status=SubmissionStatus.OFFICIAL_PASS)
    assert done.result == {"prof_sum_us": 12.5}
    assert done.finished_at is not None and not done.status.in_flight
    assert "idempotency_key" not in done.to_dict() and "run_id" not in done.to_dict()


async def test_one_source_goes_to_a_backend_once_in_any_run(lab: Lab) -> None:
    first_run = await lab.runs.create("first")
    second_run = await lab.runs.create("second")
    sha = "b" * 64
    assert await _reserve(lab, first_run.id, sha) is not None
    assert await _reserve(lab, second_run.id, sha) is None
    assert await _reserve(lab, second_run.id, sha, backend="official") is not None
    assert await lab.submissions.sources("local") == {sha}
    assert [s.backend for s in await lab.submissions.list(second_run.id)] == ["official"]
    assert await lab.submissions.list(second_run.id, backend="local") == []


async def test_a_refused_submission_frees_its_source_and_a_keyless_one_is_left_unknown(
    lab: Lab,
) -> None:
    run = await lab.runs.create("refused")
    sha = "c" * 64
    refused = await _reserve(lab, run.id, sha)
    assert refused is not None
    await lab.submissions.drop(refused)
    assert await lab.submissions.list(run.id) == []
    again = await _reserve(lab, run.id, sha)
    assert again is not None
    await lab.submissions.mark_unknown(again)
    (row,) = await lab.submissions.list(run.id)
    assert row.status is SubmissionStatus.UNKNOWN
    assert await lab.submissions.in_window(run.id, "local") == []


async def test_the_days_quota_counts_every_run_and_the_allowance_only_unverified_sources(
    lab: Lab,
) -> None:
    runs = [await lab.runs.create(f"quota-{i}") for i in range(2)]
    verified = "d" * 64
    unverified = "e" * 64
    await _candidate(lab, runs[0].id, verified)
    await _candidate(lab, runs[1].id, unverified, passed=False)
    assert await _reserve(lab, runs[0].id, verified) is not None
    assert await _reserve(lab, runs[1].id, unverified) is not None
    assert await _reserve(lab, runs[1].id, "f" * 64, day="2026-11-30") is not None

    assert await lab.submissions.count_on_day("local", DAY) == 2
    assert await lab.submissions.count_on_day("local", "2026-11-30") == 1
    assert await lab.submissions.count_on_day("official", DAY) == 0
    assert await lab.submissions.count_on_day("local", DAY, unverified_only=True) == 1
