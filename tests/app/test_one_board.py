"""One lab board per process: the scheduler's teams and the A2A executor's outside teams post
through the same `LabBoard`, so a sender's rate window is one, whoever it posts through."""

from __future__ import annotations

import pytest

from justkernel.a2a.board import BoardError, LabBoard
from justkernel.a2a.endpoint import open_a2a
from justkernel.app import LabRuntime
from justkernel.app.runtime import lab_board, open_runtime
from justkernel.settings.config import Settings

RATE = 30  # LabBoard's default posts a minute per sender


async def test_the_scheduler_and_the_a2a_executor_share_the_servers_board(
    runtime: LabRuntime, lab_settings: Settings
) -> None:
    board = lab_board(runtime.lab)
    async with open_runtime(lab_settings, slots=1, lab=runtime.lab, board=board) as opened:
        run = await runtime.lab.runs.create("one board")
        scheduler = opened.scheduler(run.id)
        async with open_a2a(runtime.lab, opened.evaluator, board=board) as endpoint:
            assert scheduler.board is board and endpoint.executor.board is board
            sender = await scheduler.add_team("offline")
            peer = await scheduler.add_team("offline")

            async def post(via: LabBoard, n: int) -> None:
                await via.post(
                    run.id,
                    sender=sender.id,
                    sender_message_id=f"m{n}",
                    recipient=peer.id,
                    type="message",
                    payload={"text": f"note {n}"},
                )

            # the posts a minute a sender may make, half through each side
            for n in range(RATE):
                await post(scheduler.board if n % 2 else endpoint.executor.board, n)
            with pytest.raises(BoardError, match="rate limit"):
                await post(endpoint.executor.board, RATE)  # over the one window
