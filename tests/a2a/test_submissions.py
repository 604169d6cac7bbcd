"""Submissions that cannot be evaluated fail with a clear message and never reach the pool;
a file part with a kernel that does not compile gets its receipt and no frozen candidate.
An inbox task waiting for its ack survives a restart of the server."""

from __future__ import annotations

from a2a.helpers import get_data_parts, get_message_text, new_data_part, new_raw_part, new_url_part
from a2a.types import Part, TaskState

from justkernel.a2a.external import join_external
from justkernel.app import LabRuntime
from justkernel.toolchains.tree import MAX_FILE_BYTES
from tests.a2a.conftest import Served, new_run_with_teams, send, serve_a2a, team_client

REFUSED: list[tuple[list[Part], str]] = [
    ([new_data_part({"harness/harness.c": "int main(void){}"})], "fixed by the operator"),
    ([new_data_part({"../escape.c": "x"})], "without '..'"),
    ([new_data_part({"op_kernel/../include/cmg_abi.h": "x"})], "without '..'"),
    ([new_data_part({"/op_kernel/cmg_kernel.c": "x"})], "relative to the project"),
    ([new_data_part({"Makefile": "all:"})], "fixed by the operator"),
    ([new_data_part({"notes.txt": "hello"})], "not editable"),
    ([new_data_part({"op_kernel/cmg_kernel.c": "x" * (MAX_FILE_BYTES + 1)})], "larger than"),
    ([new_data_part({"files": {}})], "no files"),
    ([new_url_part("http://example.invalid/k.c", filename="op_kernel/k.c")], "not a URL"),
    ([new_data_part({"op_kernel/cmg_kernel.c": 42})], "must be text"),
]


async def test_invalid_candidates_fail_clearly_without_running(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [team] = await new_run_with_teams(runtime, "Careless")
    before = runtime.evaluator.submissions
    async with team_client(served.team_url(team.team.id), team.token) as client:
        for parts, reason in REFUSED:
            task = await send(client, "submit_candidate", parts)
            assert task.status.state == TaskState.TASK_STATE_FAILED, reason
            text = get_message_text(task.status.message)
            assert text.startswith("invalid candidate:") and reason in text, text
    assert runtime.evaluator.submissions == before
    candidates = served.endpoint.executor.candidates
    assert await candidates.list(run_id, team_id=team.team.id) == []


async def test_a_kernel_that_does_not_compile_gets_a_receipt_and_no_candidate(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [team] = await new_run_with_teams(runtime, "Clumsy")
    broken = new_raw_part(b"this is not C;\n", filename="op_kernel/cmg_kernel.c")
    async with team_client(served.team_url(team.team.id), team.token) as client:
        task = await send(client, "submit_candidate", [broken])
    assert task.status.state == TaskState.TASK_STATE_COMPLETED  # evaluated: the receipt says how
    result = next(get_data_parts(a.parts)[0] for a in task.artifacts if a.name == "result")
    assert result["status"] == "compile_failed" and result["candidate_id"] is None
    assert result["total_est_cycles"] is None
    assert await served.endpoint.executor.candidates.list(run_id, team_id=team.team.id) == []


async def test_feedback_waits_for_its_ack_across_a_restart(runtime: LabRuntime) -> None:
    run = await runtime.lab.runs.create("restart")
    joined = await join_external(runtime.lab, run.id, "Patient")
    team_id = joined.team.id
    async with serve_a2a(runtime) as served:
        board = served.endpoint.executor.board
        notice, _ = await board.post(
            run.id,
            sender="judger",
            sender_message_id="official:p-1",
            recipient=team_id,
            type="feedback",
            payload={"summary": "official: pass"},
        )
        async with team_client(served.team_url(team_id), joined.token) as client:
            waiting = await send(client, "inbox")
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    async with (
        serve_a2a(runtime) as served,  # a new server process would see the same files
        team_client(served.team_url(team_id), joined.token) as client,
    ):
        acked = await send(client, "ack_feedback", task_id=waiting.id)
    assert acked.status.state == TaskState.TASK_STATE_COMPLETED
    assert await board.delivery_states(run.id, notice.id) == {team_id: "acked"}
