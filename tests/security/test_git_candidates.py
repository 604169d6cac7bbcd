"""The same planted repository, carried from team to team as a shared candidate.

An outside A2A agent holds only its team token; it submits a candidate whose files include
`op_kernel/vendor/.git/config`. If the lab accepted it, every team that fetches the candidate
would get the repository written into its own workspace (`scratch/candidates/<id>/`), where
the lab's next commit runs its hooks. The lab refuses such files at submission and, for a
candidate already in the store (an earlier session's data), never writes them at fetch.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from a2a.helpers import get_message_text, new_data_part, new_raw_part
from a2a.types import TaskState
from sqlalchemy import insert

from justkernel.app import LabRuntime
from justkernel.core.receipts import utc_now
from justkernel.store.candidates import pack_files
from justkernel.store.schema import candidates
from justkernel.store.teams import TeamRegistry
from tests.a2a.conftest import (
    Served,
    fixture_files,
    new_run_with_teams,
    send,
    serve_a2a,
    team_client,
)
from tests.support.team_context import board_tools, team_context

HOOK = '[core]\n\tfsmonitor = "touch /tmp/justkernel-pwned; false"\n'
GIT_PATHS = (
    "op_kernel/vendor/.git/config",
    "op_kernel/vendor/.GIT/config",
    "op_kernel/vendor/.git./config",
    "op_host/.git/hooks/pre-commit",
)


@pytest.fixture
async def served(runtime: LabRuntime) -> AsyncIterator[Served]:
    async with serve_a2a(runtime) as opened:
        yield opened


async def test_an_outside_agents_candidate_with_git_files_is_refused(
    runtime: LabRuntime, served: Served
) -> None:
    run_id, [outsider] = await new_run_with_teams(runtime, "Outsider")
    before = runtime.evaluator.submissions
    async with team_client(served.team_url(outsider.team.id), outsider.token) as client:
        for path in GIT_PATHS:
            for part in (
                new_data_part({**fixture_files(), path: HOOK}),
                new_raw_part(HOOK.encode(), filename=path),
            ):
                task = await send(client, "submit_candidate", [part])
                assert task.status.state == TaskState.TASK_STATE_FAILED, path
                text = get_message_text(task.status.message)
                assert text.startswith("invalid candidate:") and path in text, text
                assert "git" in text.split(path, 1)[1], text
    assert runtime.evaluator.submissions == before  # refused before anything ran
    store = served.endpoint.executor.candidates
    assert await store.list(run_id, team_id=outsider.team.id) == []


async def test_fetching_a_stored_candidate_never_writes_git_files(runtime: LabRuntime) -> None:
    lab = runtime.lab
    run_id, [outsider] = await new_run_with_teams(runtime, "Outsider")
    files = {k: v.encode() for k, v in fixture_files().items()}
    files["op_kernel/vendor/.git/config"] = HOOK.encode()
    files["op_kernel/vendor/.git/HEAD"] = b"ref: refs/heads/main\n"
    now = utc_now().isoformat()
    async with lab.db.writer.begin() as conn:  # as an earlier session could have stored it
        await conn.execute(
            insert(candidates).values(
                run_id=run_id,
                id="cand-legacy00git",
                team_id=outsider.team.id,
                source_sha256="ab" * 32,
                archive_blob=lab.blobs.put(pack_files(files)),
                commit=None,
                receipt_key="legacy",
                cycles_sum=1000,
                local_passed=True,
                status="frozen",
                review=None,
                created_at=now,
                updated_at=now,
            )
        )
    registry = TeamRegistry(lab.db)
    victim = await registry.register(
        run_id,
        model_preset="offline",
        model_label="Victim",
        workspaces_dir=lab.settings.workspaces_dir,
    )
    ctx = team_context(runtime, run_id, victim)
    workspace = ctx.workspace
    fetch = board_tools(runtime, ctx)["fetch_candidate_source"]

    answer = json.loads(await fetch.ainvoke({"candidate_id": "cand-legacy00git"}))

    assert "error" in answer and ".git" in answer["error"], answer
    assert HOOK not in json.dumps(answer)
    folder = workspace.root / "scratch" / "candidates"
    written = list(folder.rglob("*")) if folder.exists() else []
    assert not [p for p in written if ".git" in p.name.lower()]
    assert not written  # nothing of a refused candidate lands in the workspace
