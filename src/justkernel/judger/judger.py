"""The Judger: independent of every team, it reviews frozen candidates, nominates challengers,
submits within the daily quota (never the same source twice), collects official results,
keeps the verified state of the art, and sends every result back to the teams.

All its state lives in the database (candidates, submissions), so it survives restarts: a
nomination waiting for human approval still waits, and the quota still counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from justkernel.a2a.board import LabBoard
from justkernel.a2a.policies import DEFAULT_POLICY, shares_publicly
from justkernel.core.events import EventPayload
from justkernel.core.events.collab import (
    JudgerNomination,
    JudgerReview,
    JudgerSubmission,
    OfficialResult,
)
from justkernel.core.statuses import CandidateStatus, SubmissionStatus
from justkernel.core.targets import DEFAULT_TOOLCHAIN
from justkernel.evaluation.protocol import (
    CandidateBundle,
    EvaluationClient,
    JudgeError,
    JudgeQuotaError,
    JudgeRejected,
)
from justkernel.faults import crash_point
from justkernel.judger.approvals import decide
from justkernel.judger.feedback import audience, failure_of, point_feedback, seen_by
from justkernel.judger.quota import Clock, cap_reached, quota_day, utc_clock
from justkernel.judger.review import Review, review_candidate
from justkernel.judger.settings import JudgerSettings, JudgerSettingsFile
from justkernel.lab import Lab
from justkernel.operators import OperatorDefinition
from justkernel.store.candidates import Candidate, CandidateStore
from justkernel.store.submissions import Submission, SubmissionStore
from justkernel.workers.cache import ReceiptCache

log = logging.getLogger("justkernel.judger")

# (model preset, frozen files, the rules' review) -> the final review; see judger.session
ModelReview = Callable[[str, dict[str, bytes], Review], Awaitable[Review]]


# statuses the Judger itself moves on from: the run waits while any candidate holds one
_AWAITING_THE_JUDGER = frozenset(
    {
        CandidateStatus.FROZEN,
        CandidateStatus.UNDER_REVIEW,
        CandidateStatus.NOMINATED,
        CandidateStatus.AWAITING_APPROVAL,
    }
)


class Judger:
    def __init__(
        self,
        lab: Lab,
        run_id: str,
        operator: OperatorDefinition,
        candidates: CandidateStore,
        board: LabBoard,
        client: EvaluationClient,
        config: JudgerSettings | None = None,
        *,
        clock: Clock = utc_clock,
        settings_file: JudgerSettingsFile | None = None,
        model_review: ModelReview | None = None,
        toolchain: str | None = None,
    ) -> None:
        """`settings_file`, when given, is re-read before every pass (settings changed from
        the dashboard or the CLI apply without a restart) and wins over `config`.
        `model_review` reads the diff when the settings name a model instead of "rules".
        `toolchain` is the run's target, named in every bundle sent to the judge; None: the
        toolchain of the receipt that measured each candidate (a run never mixes targets)."""
        self.lab = lab
        self.run_id = run_id
        self.operator = operator
        self.candidates = candidates
        self.board = board
        self.client = client
        self.config = config or JudgerSettings()
        self.clock = clock
        self.settings_file = settings_file
        self.model_review = model_review
        self.receipts = ReceiptCache(lab.settings.resolved_data_dir / "receipts")
        self.rows: SubmissionStore = lab.submissions
        self.toolchain = toolchain
        # the quota day on which the judge answered "quota exhausted": nothing more is sent
        # until the day turns (with no local cap, that answer is the only stop)
        self._exhausted_day: str | None = None
        # a pass moves candidates through several statuses; `busy` read mid-pass could see
        # none of them (reviewed when it looked for frozen, nominated when it looked for
        # reviewed) and end the run before the nomination
        self._passing = False

    def _reload(self) -> None:
        if self.settings_file is not None:  # a broken file keeps the last good settings
            self.config = self.settings_file.current()

    async def _emit(self, payload: EventPayload, key: str) -> None:
        await self.lab.events.append(self.run_id, payload, dedup_key=key)

    # -- one pass -------------------------------------------------------------------------
    async def step(self) -> None:
        self._passing = True
        try:
            self._reload()
            await self._review_frozen()
            await self._collect_results()
            await self._nominate_and_submit()
        finally:
            self._passing = False

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.step()
            except JudgeError as exc:  # the judge is down or refusing: try again later
                log.warning("judger: %s", exc)
            except Exception:  # never let one bad pass end judging for the run
                log.exception("judger: pass failed; retrying")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.poll_seconds)

    # -- review -----------------------------------------------------------------------------
    async def _review_frozen(self) -> None:
        # under_review is only ever left behind by a crash mid-review: review it again
        waiting = await self.candidates.list(self.run_id, status=CandidateStatus.UNDER_REVIEW)
        frozen = await self.candidates.list(self.run_id, status=CandidateStatus.FROZEN)
        for cand in waiting + frozen:
            await self.candidates.set_status(self.run_id, cand.id, CandidateStatus.UNDER_REVIEW)
            receipt = self.receipts.get(cand.receipt_key)
            files = self.candidates.files(cand)
            review = await asyncio.to_thread(
                review_candidate,
                files,
                cand.source_sha256,
                receipt,
                self.operator,
                allow_unverified_precision=self.config.strategy == "official-driven",
            )
            if review.verdict == "accepted":
                review = await self._model_review(files, review)
            status = (
                CandidateStatus.REVIEWED
                if review.verdict == "accepted"
                else CandidateStatus.REJECTED
            )
            await self.candidates.set_status(self.run_id, cand.id, status, review.to_dict())
            await self._emit(
                JudgerReview(candidate_id=cand.id, team=cand.team_id, **review.to_dict()),
                f"judger.review:{cand.id}",
            )

    async def _model_review(self, files: dict[str, bytes], review: Review) -> Review:
        """The model's reading of the diff, when one is set; it can only add rejections."""
        model = self.config.model
        if model == "rules" or self.model_review is None:
            return review
        try:
            return await self.model_review(model, files, review)
        except Exception as exc:  # a broken reviewer never blocks judging, and is named
            log.warning("judger: model review with %s failed: %s", model, exc)
            note = f"model review unavailable ({model}): {type(exc).__name__}: {exc}"
            return Review(review.verdict, review.reasons, (*review.notes, note), review.reviewer)

    # -- the state of the art -----------------------------------------------------------------
    async def submissions(self, *, backend: str | None = None) -> list[Submission]:
        return await self.rows.list(self.run_id, backend=backend)

    async def champion(self) -> tuple[Submission, Candidate] | None:
        """The verified state of the art: the best official pass (lowest prof_sum)."""
        best: tuple[Submission, Candidate] | None = None
        for sub in await self.submissions(backend=self.client.backend):
            if sub.status != SubmissionStatus.OFFICIAL_PASS or not sub.result:
                continue
            prof = sub.result.get("prof_sum_us")
            if prof is None:
                continue
            if best is None or prof < (best[0].result or {}).get("prof_sum_us", float("inf")):
                best = (sub, await self.candidates.get(self.run_id, sub.candidate_id))
        return best

    async def _bar(self) -> int | None:
        """The local cycles a challenger must beat: those of the champion and of every
        submission still waiting for its result (a failed one no longer counts)."""
        bars = []
        for sub in await self.submissions(backend=self.client.backend):
            if sub.status != SubmissionStatus.OFFICIAL_FAIL:  # waiting, unknown or champion
                cand = await self.candidates.get(self.run_id, sub.candidate_id)
                if cand.cycles_sum is not None:
                    bars.append(cand.cycles_sum)
        return min(bars) if bars else None

    async def busy(self) -> bool:
        """Whether results may still come: a pass is under way, a candidate waits for review,
        nomination or a human decision, or a submission for the judge's answer or its result.
        The candidates are read once, so a status that moves while this looks (a human's
        approval from another process) is seen in one place or the other, never in neither."""
        if self._passing:
            return True
        everyone = await self.candidates.list(self.run_id)
        statuses = {c.status for c in everyone}
        if statuses & _AWAITING_THE_JUDGER:
            return True
        if any(s.status.in_flight for s in await self.submissions(backend=self.client.backend)):
            return True
        if await self.at_cap():
            return False  # what waits for a submission waits for tomorrow
        if CandidateStatus.APPROVED_PENDING in statuses:
            return True
        # reviewed and beating the bar: the next pass nominates it (a run that ended between
        # the review and the nomination left its submission without a result)
        reviewed = [c for c in everyone if c.status == CandidateStatus.REVIEWED]
        return bool(reviewed) and await self._challenger(reviewed) is not None

    async def used_today(self) -> int:
        return await self.rows.count_on_day(self.client.backend, quota_day(self.clock()))

    async def at_cap(self) -> bool:
        """Whether today's submissions are over: the local cap is used up, or the judge said
        its own quota is exhausted today (paused until 00:00 Shanghai)."""
        if self._exhausted_day == quota_day(self.clock()):
            return True
        return cap_reached(await self.used_today(), self.config.quota_per_day)

    # -- nominate and submit ------------------------------------------------------------------
    async def diagnosis_used_today(self) -> int:
        """Today's submissions of sources that did not pass local precision."""
        day = quota_day(self.clock())
        return await self.rows.count_on_day(self.client.backend, day, unverified_only=True)

    async def _challenger(self, reviewed: list[Candidate] | None = None) -> Candidate | None:
        """The best reviewed source not yet submitted that beats the bar by the margin; under
        the official-driven strategy, else the oldest unverified one within the diagnosis
        allowance (its official per-point results are the diagnosis). `reviewed`: the
        reviewed candidates as the caller read them (default: read now)."""
        done = await self.rows.sources(self.client.backend)
        if reviewed is None:
            reviewed = await self.candidates.list(self.run_id, status=CandidateStatus.REVIEWED)
        reviewed = [c for c in reviewed if c.source_sha256 not in done]
        verified = [c for c in reviewed if c.local_passed and c.cycles_sum is not None]
        if verified:
            best = min(verified, key=lambda c: c.cycles_sum or 0)
            bar = await self._bar()
            assert best.cycles_sum is not None
            if bar is None or best.cycles_sum < bar * (1 - self.config.margin):
                return best
        if self.config.strategy != "official-driven":
            return None
        unverified = [c for c in reviewed if not c.local_passed]
        if unverified and await self.diagnosis_used_today() < self.config.diagnosis_per_day:
            return unverified[0]
        return None

    async def _nominate_and_submit(self) -> None:
        # approved by a human, or nominated just before a crash
        await self._resume_submitting()
        for status in (CandidateStatus.APPROVED_PENDING, CandidateStatus.NOMINATED):
            for cand in await self.candidates.list(self.run_id, status=status):
                await self._submit(cand)
        if await self.at_cap():
            return  # nominate nothing the quota cannot carry today
        best = await self._challenger()
        if best is None:
            return
        bar = await self._bar()
        waiting = bool(self.config.human_approval)
        await self.candidates.set_status(
            self.run_id,
            best.id,
            CandidateStatus.AWAITING_APPROVAL if waiting else CandidateStatus.NOMINATED,
        )
        await self._emit(
            JudgerNomination(
                candidate_id=best.id,
                team=best.team_id,
                cycles_sum=best.cycles_sum,
                champion_cycles=bar,  # the bar: champion and pending submissions
                local_passed=best.local_passed,
                awaiting_approval=waiting,
            ),
            f"judger.nomination:{best.id}",
        )
        if not waiting:
            await self._submit(await self.candidates.get(self.run_id, best.id))

    async def decide(self, candidate_id: str, decision: str, by: str = "human") -> dict[str, Any]:
        """Approve or reject a nomination that waits for a human (dashboard or CLI)."""
        return await decide(self.lab, self.candidates, self.run_id, candidate_id, decision, by)

    async def _submit(self, cand: Candidate) -> None:
        if await self.at_cap():  # try tomorrow; a human's approval stands
            if cand.status != CandidateStatus.APPROVED_PENDING:
                await self.candidates.set_status(self.run_id, cand.id, CandidateStatus.REVIEWED)
            return
        # reserve first, with the key every try will send: a crash after this never sends
        # the same source under another key
        reserved = await self.rows.reserve(
            self.run_id,
            candidate_id=cand.id,
            team_id=cand.team_id,
            source_sha256=cand.source_sha256,
            backend=self.client.backend,
            day=quota_day(self.clock()),
        )
        if reserved is None:  # this source was already submitted to this backend
            await self.candidates.set_status(self.run_id, cand.id, CandidateStatus.SUBMITTED)
            return
        await self._send(reserved, cand, again=False)

    async def _resume_submitting(self) -> None:
        """Rows left in the submit window (a crash, or an answer that never came): sent
        again under their own key, so the judge answers with what it already holds."""
        for reserved in await self.rows.in_window(self.run_id, self.client.backend):
            cand = await self.candidates.get(self.run_id, reserved.candidate_id)
            if reserved.idempotency_key is None:  # reserved before keys were kept
                log.warning("judger: %s has no idempotency key; left unknown", reserved.id)
                await self.rows.mark_unknown(reserved)
                continue
            await self._send(reserved, cand, again=True)

    def _toolchain_of(self, cand: Candidate) -> str:
        """The target the candidate's files are written for: the run's, else the toolchain of
        its receipt, else the project the Judger's operator view builds. A `cann` run's files
        are the Ascend C project itself, which the judges grade as `ascendc-cpu` sources (the
        local judge on its CPU model, the official one on the contest's hardware)."""
        return _graded_as(self._written_for(cand))

    def _written_for(self, cand: Candidate) -> str:
        if self.toolchain is not None:
            return self.toolchain
        with contextlib.suppress(ValueError):  # a key that is no job key has no receipt
            receipt = self.receipts.get(cand.receipt_key)
            if receipt is not None:
                return receipt.executor.toolchain_id
        try:
            ascendc = self.operator.for_toolchain(DEFAULT_TOOLCHAIN).project_dir
        except ValueError:  # no Ascend C project: the C port is the only target
            return "cpu"
        return DEFAULT_TOOLCHAIN if ascendc == self.operator.project_dir else "cpu"

    async def _send(self, reserved: Submission, cand: Candidate, *, again: bool) -> None:
        note = "" if cand.local_passed else "local precision not fully verified"
        bundle = CandidateBundle.create(
            self.operator.name,
            self.candidates.files(cand),
            team=cand.team_id,
            candidate_id=cand.id,
            note=note,
            toolchain=self._toolchain_of(cand),
        )
        key = reserved.idempotency_key
        try:
            if again:
                submission_id = await self.client.resubmit(bundle, idempotency_key=key)
            else:
                submission_id = await self.client.submit(bundle, idempotency_key=key)
        except (JudgeRejected, JudgeQuotaError) as exc:  # refused for sure: free the source
            await self.rows.drop(reserved)
            if isinstance(exc, JudgeQuotaError):
                self._exhausted_day = quota_day(self.clock())
            retry = not isinstance(exc, JudgeRejected)
            await self.candidates.set_status(
                self.run_id,
                cand.id,
                CandidateStatus.REVIEWED if retry else CandidateStatus.REJECTED,
            )
            raise
        except JudgeError:  # maybe received: the row stays, to be sent again under its key
            await self.candidates.set_status(self.run_id, cand.id, CandidateStatus.SUBMITTED)
            raise
        crash_point("submit.window")
        # the news first, the row last: a crash in between sends the key again, gets the same
        # id back, and the deduplicated event is not written twice
        await self._emit(
            JudgerSubmission(
                candidate_id=cand.id,
                team=cand.team_id,
                submission_id=submission_id,
                backend=self.client.backend,
                source_sha256=cand.source_sha256,
                note=note,
                resent=again,
                quota_used=await self.used_today(),
                quota_limit=self.config.quota_per_day,
            ),
            f"judger.submission:{submission_id}",
        )
        await self.rows.record_sent(reserved, submission_id)
        await self.candidates.set_status(self.run_id, cand.id, CandidateStatus.SUBMITTED)

    # -- results --------------------------------------------------------------------------
    async def _collect_results(self) -> None:
        for sub in await self.submissions(backend=self.client.backend):
            if sub.status != SubmissionStatus.SUBMITTED:
                continue
            result = await self.client.result(sub.id)
            if not result.status.done:
                continue
            await self._record_result(sub, result)

    async def _post_feedback(self, sub: Submission, data: dict[str, Any], status: str) -> None:
        policies, _order = await self.board.policies(self.run_id)
        earlier = [
            (s.team_id, s.result)
            for s in await self.submissions(backend=self.client.backend)
            if s.id != sub.id
            and s.result
            and s.status in (SubmissionStatus.OFFICIAL_PASS, SubmissionStatus.OFFICIAL_FAIL)
        ]
        own = seen_by(data, earlier, audience(sub.team_id, policies))
        await self.board.post(
            self.run_id,
            sender="judger",
            sender_message_id=f"result:{sub.id}:{sub.team_id}",
            recipient=sub.team_id,
            type="feedback",
            payload={
                **own,
                "summary": f"your candidate {sub.candidate_id}: {status}",  # for the model
                "summary_code": "feedback_own",  # for the page, which translates it
                "summary_params": {"candidate": sub.candidate_id, "status": str(status)},
            },
        )
        if not shares_publicly(policies.get(sub.team_id, DEFAULT_POLICY)):
            return
        await self.board.post(
            self.run_id,
            sender="judger",
            sender_message_id=f"result:{sub.id}:all",
            recipient="all",
            excluding=sub.team_id,  # its own message above says it in full: one per team
            type="feedback",
            payload={
                "submission_id": sub.id,
                "candidate_id": sub.candidate_id,
                "team": sub.team_id,
                "status": status,
                "prof_sum_us": data["prof_sum_us"],
                "sota_changed": own["sota_changed"],  # among the teams that share
                "summary": f"{sub.team_id}'s {sub.candidate_id}: {status}",
                "summary_code": "feedback_public",
                "summary_params": {
                    "team": sub.team_id,
                    "candidate": sub.candidate_id,
                    "status": str(status),
                },
            },
        )

    async def _record_result(self, sub: Submission, result: Any) -> None:
        champion = await self.champion()
        passed = result.passed
        status = SubmissionStatus.OFFICIAL_PASS if passed else SubmissionStatus.OFFICIAL_FAIL
        points = point_feedback(result)
        outcome, diagnostics = failure_of(result)
        data = {
            "submission_id": sub.id,
            "candidate_id": sub.candidate_id,
            "source_sha256": sub.source_sha256,
            "status": status,
            "points": points,
            "prof_sum_us": result.prof_sum_us,
            "outcome": outcome,
            "diagnostics": diagnostics,
        }
        best_prof = (champion[0].result or {}).get("prof_sum_us") if champion else None
        sota_changed = bool(
            passed
            and result.prof_sum_us is not None
            and (best_prof is None or result.prof_sum_us < best_prof)
        )
        # the news first, the submission's state last: while it still reads "submitted" the
        # Judger is busy, so a run cannot end between the result and its feedback (both are
        # deduplicated, so a crash in between repeats nothing on the next pass)
        await self.lab.events.append(
            self.run_id,
            OfficialResult(**data, backend=sub.backend, sota_changed=sota_changed),
            team=sub.team_id,
            dedup_key=f"official.result:{sub.id}",
        )
        crash_point("official.before_feedback")
        # a correction task for the submitting team, and the news for every other team that
        # shares (each team hears of each result once); a control team's result is news to
        # nobody, and it hears of nobody's (feedback.py)
        await self._post_feedback(sub, data, status)
        await self.rows.record_result(sub.id, status, data)
        await self.candidates.set_status(self.run_id, sub.candidate_id, CandidateStatus(status))


def _graded_as(toolchain_id: str) -> str:
    """The target a judge grades a bundle of `toolchain_id`'s project as (cann: its Ascend C
    project, as ascendc-cpu)."""
    return "ascendc-cpu" if toolchain_id == "cann" else toolchain_id
