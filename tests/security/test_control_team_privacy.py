"""Attack: read a control team (sharing policy `none`), or let it read the others.

A control team measures what sharing is worth, so it must learn nothing from other teams and
they nothing from it. Three holes: `fetch_candidate_source` copied any candidate, the owner's
policy unchecked; the Judger's news to every team named the control team's candidate and its
result; and the control team's own feedback carried the judge's best times over everybody's
submissions (and a "state of the art changed" flag measured against them).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.helpers import new_data_part
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict
from sqlalchemy import insert

from justkernel.a2a.board import LabBoard
from justkernel.a2a.external import join_external
from justkernel.app import LabRuntime
from justkernel.core.receipts import utc_now
from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.judger.judger import Judger
from justkernel.judger.settings import JudgerSettings
from justkernel.settings.config import Settings
from justkernel.store.candidates import CandidateStore, pack_files
from justkernel.store.schema import candidates
from justkernel.store.teams import Team, TeamRegistry
from tests.a2a.conftest import Served, send, serve_a2a, team_client
from tests.judger.test_judger import _files
from tests.support.judge import judge_in_thread, judge_token, new_judge_dir
from tests.support.labs import open_folder
from tests.support.team_context import board_tools, team_context

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def lab_settings(tmp_path: Path) -> Settings:
    """A lab folder of its own: the shared one's daily quota may be spent by earlier tests."""
    return Settings(data_dir=tmp_path / "data", config_dir=tmp_path / "config")


@pytest.fixture
def judge() -> Iterator[tuple[str, str]]:
    judge_dir = new_judge_dir(open_folder("jk-control-"))
    with judge_in_thread(judge_dir) as url:
        yield url, judge_token(judge_dir)


async def _team(runtime: LabRuntime, run_id: str, sharing: str) -> Team:
    return await TeamRegistry(runtime.lab.db).register(
        run_id,
        model_preset="offline",
        model_label=sharing,
        workspaces_dir=runtime.lab.settings.workspaces_dir,
        config={"sharing": sharing},
    )


async def _candidate(
    runtime: LabRuntime, run_id: str, team: Team, files: dict[str, bytes], status: str
) -> str:
    """A candidate in the store, as the team's freeze would leave it."""
    lab, cid, now = runtime.lab, f"cand-{uuid.uuid4().hex[:12]}", utc_now().isoformat()
    async with lab.db.writer.begin() as conn:
        await conn.execute(
            insert(candidates).values(
                run_id=run_id,
                id=cid,
                team_id=team.id,
                source_sha256=editable_tree_sha256(files),
                archive_blob=lab.blobs.put(pack_files(files)),
                commit=None,
                receipt_key="control-test",
                cycles_sum=1000,
                local_passed=True,
                status=status,
                review=None,
                created_at=now,
                updated_at=now,
            )
        )
    return cid


def _marked(step: str | None, mark: str) -> dict[str, bytes]:
    files = _files(step)  # marked: no other test submits this source
    files["op_kernel/cmg_kernel.c"] += f"\n/* test_control_team_privacy: {mark} */\n".encode()
    return files


async def test_a_control_teams_candidate_cannot_be_fetched(runtime: LabRuntime) -> None:
    lab = runtime.lab
    run = await lab.runs.create("control fetch")
    reader = await _team(runtime, run.id, "broadcast-best")
    control = await _team(runtime, run.id, "none")
    secret_id = await _candidate(runtime, run.id, control, _marked(None, run.id), "frozen")
    ctx = team_context(runtime, run.id, reader)
    workspace = ctx.workspace
    tools = board_tools(runtime, ctx)

    listed = json.loads(await tools["read_public_candidates"].ainvoke({}))
    assert secret_id not in json.dumps(listed)
    answer = json.loads(await tools["fetch_candidate_source"].ainvoke({"candidate_id": secret_id}))

    assert "error" in answer and "control team" in answer["error"], answer
    assert "files" not in answer and "test_control_team_privacy" not in json.dumps(answer)
    assert not (workspace.root / "scratch" / "candidates" / secret_id).exists()


async def _settle(judger: Judger) -> None:
    for _ in range(1500):
        await judger.step()
        if all(s.status != "submitted" for s in await judger.submissions()):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the judge never answered")


async def test_the_judgers_news_neither_names_control_teams_nor_tells_them_of_others(
    runtime: LabRuntime, judge: tuple[str, str]
) -> None:
    lab = runtime.lab
    run = await lab.runs.create("control news")
    outsider = await join_external(lab, run.id, "Outsider")  # an outside A2A agent, sharing
    sharing = await _team(runtime, run.id, "broadcast-best")
    control = await _team(runtime, run.id, "none")
    store = CandidateStore(lab.db, lab.events, lab.blobs)
    board = LabBoard(lab.db, lab.events, TeamRegistry(lab.db))
    url, token = judge
    client = HttpJudgeClient(JudgeClientConfig(base_url=url, token=token, backend="local"))
    judger = Judger(
        lab,
        run.id,
        runtime.operator,
        store,
        board,
        client,
        JudgerSettings(quota_per_day=5, poll_seconds=0.2),
    )
    try:
        # the sharing team's fast kernel first, then the control team's baseline
        fast = await _candidate(
            runtime, run.id, sharing, _marked("s2_contiguous_inner_loops", run.id), "nominated"
        )
        await _settle(judger)
        slow = await _candidate(runtime, run.id, control, _marked(None, run.id), "nominated")
        await _settle(judger)
    finally:
        await client.aclose()
    subs = {s.candidate_id: s for s in await judger.submissions()}
    outcomes = {k: (s.status, (s.result or {}).get("points")) for k, s in subs.items()}
    assert subs[fast].status == subs[slow].status == "official_pass", outcomes
    hidden = (slow, subs[slow].id, control.id)

    news = await board.deliver(run.id, sharing.id, "read")
    assert any(m.payload.get("candidate_id") == fast for m in news)  # its own feedback came
    text = json.dumps([m.to_dict() for m in news])
    assert not [h for h in hidden if h in text], "the sharing team hears of the control team"

    async with serve_a2a(runtime) as served:
        outside = await _outside_inbox(served, outsider.team.id, outsider.token)
    assert fast in outside  # the news of a sharing team reaches the outside agent
    assert not [h for h in hidden if h in outside], "the outside agent hears of the control team"

    [mine] = [m.payload for m in await board.deliver(run.id, control.id, "read")]
    assert mine["candidate_id"] == slow and fast not in json.dumps(mine)
    for point in mine["points"]:  # the best it is shown is its own, never the other team's
        assert point["best_time_us"] == point["time_us"], point
    assert mine["sota_changed"] is True  # its first pass: it knows of no other


async def _outside_inbox(served: Served, team_id: str, token: str) -> str:
    async with team_client(served.team_url(team_id), token) as client:
        task = await send(client, "inbox", [new_data_part({})])
    assert task.status.state in (
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_COMPLETED,
    )
    return json.dumps([MessageToDict(a) for a in task.artifacts])
