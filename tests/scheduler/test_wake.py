"""Issue 15 point 4: a team woken by news is told what arrived, and the news it was shown is
acknowledged even when the model ignores it (a model that answers "[done]" without reading its
inbox was woken 22 times in 2.4 s, then paused, its deliveries pending for good)."""

from __future__ import annotations

from typing import Any

from justkernel.app import LabRuntime
from tests.support.openai_server import Reply
from tests.support.scripted_run import scripted_run

KEY = "sk-scripted-wake-key-424242"


def _last_user_text(body: dict[str, Any]) -> str:
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


async def test_a_model_that_always_says_done_is_woken_once_per_batch_and_told_the_news(
    runtime: LabRuntime,
) -> None:
    done = Reply(text="Nothing to do. [done]")
    async with scripted_run(runtime, "woken for news", lambda body: done, key=KEY) as arranged:
        server, scheduler = arranged.server, arranged.scheduler
        run, team = arranged.run, arranged.team
        await scheduler.run(seconds=60)
        assert (await runtime.lab.teams.get(run.id, team.id)).status == "done"
        assert len(server.chat_bodies) == 1

        batches = [
            [("judger", "feedback", "your candidate cand-7: official_pass 15/15 points")],
            [
                ("judger", "feedback", "your candidate cand-8: official_fail 3/15 points"),
                ("lab", "candidate", "Team 2: new best 243,403 est. cycles"),
            ],
        ]
        for number, batch in enumerate(batches):
            ids = []
            for index, (sender, kind, summary) in enumerate(batch):
                message, _ = await runtime.board.post(
                    run.id,
                    sender=sender,
                    sender_message_id=f"news-{number}-{index}",
                    recipient=team.id,
                    type=kind,
                    payload={"summary": summary},
                )
                ids.append(message.id)
            before = len(server.chat_bodies)
            await scheduler.run(seconds=60)
            assert len(server.chat_bodies) == before + 1  # one woken turn for the batch
            prompt = _last_user_text(server.chat_bodies[-1])
            for _sender, _kind, summary in batch:
                assert summary in prompt, prompt
            assert "read_inbox" in prompt
            for message_id in ids:  # shown, so seen: nothing stays pending
                states = await runtime.board.delivery_states(run.id, message_id)
                assert states == {team.id: "acked"}
            assert await runtime.board.pending(run.id, team.id) == 0
            assert (await runtime.lab.teams.get(run.id, team.id)).status == "done"
