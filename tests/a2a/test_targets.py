"""An outside team's candidate is checked against its run's target: files of the other
target's project are refused by name before anything runs, and a receipt of another toolchain
is never frozen into a run (defence in depth: the scheduler's handoff and the A2A executor)."""

from __future__ import annotations

import pytest
from a2a.helpers import new_data_part
from a2a.types import Message, Role

from justkernel.a2a.board import LabBoard
from justkernel.a2a.executor import LabAgentExecutor, SkillError, candidate_files
from justkernel.app import LabRuntime
from justkernel.core.targets import TargetMismatch
from justkernel.operators import load_operator
from justkernel.scheduler.handoff import CandidateHandoff
from justkernel.store.teams import Team


def _message(files: dict[str, str]) -> Message:
    return Message(role=Role.ROLE_USER, message_id="m1", parts=[new_data_part(files)])


C_PORT = {"op_kernel/cmg_kernel.c": "void confusion_mul_grad(void) {}\n"}
ASCENDC = {"op_kernel/confusion_mul_grad.cpp": "// an Ascend C kernel\n"}


def test_files_of_the_other_targets_project_are_refused_by_name() -> None:
    operator = load_operator()
    ascendc = operator.for_toolchain("ascendc-cpu")
    with pytest.raises(SkillError) as caught:
        candidate_files(_message(C_PORT), ascendc, "ascendc-cpu")
    message = str(caught.value)
    assert "op_kernel/cmg_kernel.c: a file of the C port project" in message
    assert "this run's target is ascendc-cpu" in message
    assert "op_kernel/confusion_mul_grad.cpp" in message  # what the run expects instead
    with pytest.raises(SkillError, match="a file of the C port project"):
        candidate_files(_message({"include/cmg_abi.h": "x"}), ascendc, "ascendc-cpu")

    with pytest.raises(SkillError) as caught:
        candidate_files(_message(ASCENDC), operator, "cpu")
    assert "a file of the Ascend C project, but this run's target is cpu" in str(caught.value)
    with pytest.raises(SkillError, match="a file of the Ascend C project"):
        candidate_files(_message({"CMakeLists.txt": "x"}), operator, "cpu")

    # each target's own files pass, and so do helper headers both projects may hold
    assert set(candidate_files(_message(ASCENDC), ascendc, "ascendc-cpu")) == set(ASCENDC)
    assert set(candidate_files(_message(C_PORT), operator, "cpu")) == set(C_PORT)
    helper = {"op_kernel/tile_math.h": "#pragma once\n"}
    assert set(candidate_files(_message(helper), ascendc, "ascendc-cpu")) == set(helper)


async def test_the_executor_refuses_a_run_whose_target_it_cannot_evaluate(
    runtime: LabRuntime,
) -> None:
    executor = LabAgentExecutor(runtime.lab, runtime.evaluator, runtime.board)  # a cpu one
    assert (await executor.evaluator("cpu")) is runtime.evaluator
    with pytest.raises(SkillError, match="this run's target is ascendc-cpu"):
        await executor.evaluator("ascendc-cpu")

    async def of_target(toolchain_id: str):  # type: ignore[no-untyped-def]
        return runtime.target(toolchain_id).evaluator

    per_target = LabAgentExecutor(runtime.lab, of_target, runtime.board)
    chosen = await per_target.evaluator("ascendc-cpu")
    assert chosen.toolchain.id == "ascendc-cpu"
    assert chosen.definition.project_dir.name == "ascendc"


class _Receipt:
    """Only what the handoff reads before it refuses: the executor's toolchain id."""

    class executor:  # mirrors Receipt.executor
        toolchain_id = "cpu"

    status = "measured"


async def test_a_receipt_of_another_toolchain_is_never_frozen_into_the_run(
    runtime: LabRuntime,
) -> None:
    run = await runtime.lab.runs.create("an ascendc run", meta={"toolchain": "ascendc-cpu"})
    board: LabBoard = runtime.board
    handoff = CandidateHandoff(run.id, runtime.lab.candidates, board, toolchain_id="ascendc-cpu")
    team = Team.__new__(Team)  # never read: the refusal comes first
    with pytest.raises(TargetMismatch, match="built by cpu, but this run's target is ascendc"):
        await handoff.receive(team, "public", _Receipt(), {"op_kernel/x.cpp": b""}, None)
    assert await runtime.lab.candidates.list(run.id) == []
