"""The submit window, client side, against a real local judge over HTTP: a submission whose
answer was lost (the lab killed after the judge accepted it) is the same submission when the
restarted lab sends it again, whether the judge honours `Idempotency-Key` (ours: the stored key
is sent again) or not (the client finds the submission in the judge's listing first). The whole
crash, in a real `justkernel run` on SQLite and PostgreSQL, is test_crash_matrix.py."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from tests.support.judge import bundle, judge_in_thread, judge_token, new_judge_dir
from tests.support.labs import open_folder


@pytest.fixture
def judge() -> Iterator[tuple[str, str]]:
    judge_dir = new_judge_dir(open_folder("jk-submit-window-"))
    with judge_in_thread(judge_dir) as url:
        yield url, judge_token(judge_dir)


def _client(url: str, token: str, *, keys: bool = True) -> HttpJudgeClient:
    return HttpJudgeClient(
        JudgeClientConfig(base_url=url, token=token, backend="local", idempotency_keys=keys)
    )


def _used(url: str, token: str) -> int:
    answer = httpx.get(f"{url}/api/quota", headers={"Authorization": f"Bearer {token}"})
    return int(answer.json()["used"])


async def test_a_resend_under_the_stored_key_is_the_submission_the_judge_holds(
    judge: tuple[str, str],
) -> None:
    url, token = judge
    sent = bundle(team="team-001", candidate_id="cand-window-1")
    async with _client(url, token) as lab:
        first = await lab.submit(sent, idempotency_key="stored-key-1")
    # the lab dies before it records `first`; after the restart it has only its stored key
    async with _client(url, token) as restarted:
        again = await restarted.resubmit(sent, idempotency_key="stored-key-1")
    assert again == first
    assert _used(url, token) == 1  # the quota was spent once


async def test_a_judge_without_keys_is_asked_for_its_listing_before_a_resend(
    judge: tuple[str, str],
) -> None:
    url, token = judge
    sent = bundle(team="team-001", candidate_id="cand-window-2")
    async with _client(url, token) as lab:
        first = await lab.submit(sent, idempotency_key="lost-with-the-lab")
    # a judge that ignores the header sees every try as new: a key it never saw stands for that
    async with _client(url, token, keys=False) as restarted:
        again = await restarted.resubmit(sent, idempotency_key="a-key-the-judge-never-saw")
    assert again == first
    assert _used(url, token) == 1
    other = bundle(team="team-001", candidate_id="cand-window-3")  # same source, other candidate
    async with _client(url, token, keys=False) as restarted:
        fresh = await restarted.resubmit(other, idempotency_key="k-3")
    assert fresh != first and _used(url, token) == 2  # not mistaken for another's submission
