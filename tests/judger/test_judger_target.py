"""The Judger names its run's target in every bundle it sends (issue 14 point 4): the local
judge evaluates a bundle with the toolchain it names and refuses files of the other target's
project, so a wrong name would cost the team an official fail. The toolchain given to the
Judger wins; else the toolchain of the candidate's receipt (tests/judger/test_judger.py sends
real C port receipts to a real judge); else the project the Judger's operator view builds."""

from __future__ import annotations

import uuid

from sqlalchemy import insert

from justkernel.app import LabRuntime
from justkernel.core.receipts import utc_now
from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.evaluation.protocol import CandidateBundle, OfficialResult, QuotaInfo
from justkernel.judger.judger import Judger
from justkernel.judger.settings import JudgerSettings
from justkernel.operators import OperatorDefinition, load_operator
from justkernel.store.candidates import CandidateStore, pack_files
from justkernel.store.schema import candidates
from justkernel.store.teams import TeamRegistry


class RecordingClient:
    """An EvaluationClient that keeps what it was sent (the judge's side is tested apart)."""

    backend = "local"

    def __init__(self) -> None:
        self.sent: list[CandidateBundle] = []

    async def submit(self, bundle: CandidateBundle, *, idempotency_key: str | None = None) -> str:
        self.sent.append(bundle)
        return f"sub-{uuid.uuid4().hex[:12]}"

    async def resubmit(self, bundle: CandidateBundle, *, idempotency_key: str) -> str:
        return await self.submit(bundle, idempotency_key=idempotency_key)

    async def result(self, submission_id: str) -> OfficialResult:
        raise AssertionError("not polled in this test")

    async def wait(
        self, submission_id: str, *, max_seconds: float = 600.0, poll_seconds: float = 1.0
    ) -> OfficialResult:
        raise AssertionError("not polled in this test")

    async def quota(self) -> QuotaInfo | None:
        return None

    async def aclose(self) -> None:
        return None


async def _candidate(
    runtime: LabRuntime, run_id: str, team_id: str, files: dict[str, bytes]
) -> str:
    """A reviewed candidate whose receipt is not in the cache (its key is no job key)."""
    lab, cid, now = runtime.lab, f"cand-{uuid.uuid4().hex[:12]}", utc_now().isoformat()
    async with lab.db.writer.begin() as conn:
        await conn.execute(
            insert(candidates).values(
                run_id=run_id,
                id=cid,
                team_id=team_id,
                source_sha256=editable_tree_sha256(files),
                archive_blob=lab.blobs.put(pack_files(files)),
                commit=None,
                receipt_key="no-receipt",
                cycles_sum=1000,
                local_passed=True,
                status="reviewed",
                review=None,
                created_at=now,
                updated_at=now,
            )
        )
    return cid


async def test_every_bundle_names_the_target_its_files_are_written_for(
    runtime: LabRuntime,
) -> None:
    lab = runtime.lab
    run = await lab.runs.create("judger targets")
    team = await TeamRegistry(lab.db).register(
        run.id,
        model_preset="offline",
        model_label="offline",
        workspaces_dir=lab.settings.workspaces_dir,
    )
    store = CandidateStore(lab.db, lab.events, lab.blobs)
    scheduler = runtime.scheduler(run.id)
    port: OperatorDefinition = load_operator()
    ascendc = port.for_toolchain("ascendc-cpu")
    cases: list[tuple[OperatorDefinition, str | None, str]] = [
        (port, None, "cpu"),  # no receipt: the C port view builds the C port
        (ascendc, None, "ascendc-cpu"),  # the Ascend C view builds the Ascend C project
        (ascendc, "cpu", "cpu"),  # the run's target, when given, wins
        (ascendc, "cann", "ascendc-cpu"),  # a cann run's files: the Ascend C project
    ]
    for n, (operator, given, expected) in enumerate(cases):
        files = {operator.build.kernel_source: f"// candidate {n} of {run.id}\n".encode()}
        cid = await _candidate(runtime, run.id, team.id, files)
        client = RecordingClient()
        judger = Judger(
            lab,
            run.id,
            operator,
            store,
            scheduler.board,
            client,
            JudgerSettings(quota_per_day=10),
            toolchain=given,
        )
        await judger._submit(await store.get(run.id, cid))
        assert [b.toolchain for b in client.sent] == [expected], (n, operator.project_dir)
        assert dict(client.sent[0].files) == files
