"""The official client (httpx) against the real local judge over HTTP: typed errors, retries
with backoff on connection errors, Retry-After honoured and bounded on 429, no retry on a
quota error, configurable paths, and no token in any message or repr.

`sleep` is replaced by a recorder where a test must see the waits without sitting them out;
every request still goes to the real server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from justkernel.evaluation.official_client import (
    HttpJudgeClient,
    JudgeClientConfig,
    JudgeEndpoints,
    RetryPolicy,
)
from justkernel.evaluation.protocol import (
    CandidateBundle,
    EvaluationClient,
    JudgeAuthError,
    JudgeNotFound,
    JudgeQuotaError,
    JudgeRateLimited,
    JudgeRejected,
    JudgeUnavailable,
)
from tests.support.judge import (
    RunningJudge,
    bundle,
    new_judge_dir,
    running_judge,
    start_judge,
)
from tests.workers.test_evaluator_shared import require_tools

pytestmark = pytest.mark.timeout(300)


class Sleeps:
    """Records every wait the client asks for; `then` runs once, on the first wait."""

    def __init__(self, then: object = None) -> None:
        self.waits: list[float] = []
        self.then = then

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        if callable(self.then):
            action, self.then = self.then, None
            action()


def client_for(
    judge: RunningJudge, sleep: Sleeps | None = None, **options: object
) -> HttpJudgeClient:
    config = JudgeClientConfig(base_url=judge.url, token=judge.token, **options)  # type: ignore[arg-type]
    return HttpJudgeClient(config, sleep=sleep or Sleeps())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_wrong_token_is_an_auth_error_and_no_message_shows_a_token(tmp_path: Path) -> None:
    require_tools()
    with running_judge(new_judge_dir(tmp_path)) as judge:
        secret = "wrong-" + judge.token[:20]
        config = JudgeClientConfig(base_url=judge.url, token=secret)
        async with HttpJudgeClient(config) as client:
            assert isinstance(client, EvaluationClient)
            with pytest.raises(JudgeAuthError) as caught:
                await client.quota()
            assert secret not in str(caught.value) and secret not in repr(client)
            assert secret not in repr(config)
            assert "login token is wrong" in str(caught.value)
        async with client_for(judge, login=False) as direct:  # the token as the bearer
            quota = await direct.quota()
            assert quota is not None and (quota.used, quota.limit) == (0, 50)
            assert direct.logins == 0
        async with client_for(judge) as client:
            with pytest.raises(JudgeNotFound, match="no such submission"):
                await client.result("sub-0000")
            cmake = {"op_host/CMakeLists.txt": b""}  # the Ascend C project's, msopgen's
            forbidden = CandidateBundle.create("confusion_mul_grad", cmake)
            with pytest.raises(JudgeRejected, match="fixed by the operator"):
                await client.submit(forbidden)
            assert client.logins == 1
            assert judge.token not in str(client.config) and judge.token not in repr(client)


async def test_connection_errors_are_retried_with_backoff_until_the_judge_answers(
    tmp_path: Path,
) -> None:
    require_tools(valgrind=True)
    judge_dir = new_judge_dir(tmp_path)
    port = free_port()
    started: list[RunningJudge] = []
    config = JudgeClientConfig(
        base_url=f"http://127.0.0.1:{port}",
        token=(judge_dir / "token").read_text().strip(),
        retry=RetryPolicy(attempts=4, base_seconds=0.5, max_seconds=4.0),
    )
    # nobody listens: every try fails, the waits double (with jitter), then it gives up
    sleeps = Sleeps()
    async with HttpJudgeClient(config, sleep=sleeps) as client:
        with pytest.raises(JudgeUnavailable, match=r"unreachable .*after 4 tries"):
            await client.quota()
    assert len(sleeps.waits) == 3
    for n, wait in enumerate(sleeps.waits):
        assert 0.5 * 0.5 * 2**n <= wait <= 0.5 * 2**n
    # the judge comes up during the first backoff: the retry gets through
    sleeps = Sleeps(then=lambda: started.append(start_judge(judge_dir, port=port)))
    try:
        async with HttpJudgeClient(config, sleep=sleeps) as client:
            quota = await client.quota()
        assert quota is not None and quota.used == 0
        assert len(sleeps.waits) == 1 and started
    finally:
        for judge in started:
            judge.stop()


async def test_429_waits_for_retry_after_within_bounds_and_quota_is_never_retried(
    tmp_path: Path,
) -> None:
    require_tools(valgrind=True)
    candidate = bundle()
    with running_judge(new_judge_dir(tmp_path), "--submissions-per-minute", "1") as judge:
        sleeps = Sleeps()
        local = {"backend": "local"}  # a C port bundle: the official backend would refuse it
        async with client_for(judge, sleeps, retry=RetryPolicy(attempts=3), **local) as client:
            await client.submit(candidate)
            with pytest.raises(JudgeRateLimited) as caught:
                await client.submit(candidate)
        assert caught.value.retry_after is not None and 50 <= caught.value.retry_after <= 60
        assert len(sleeps.waits) == 2 and all(50 <= w <= 60 for w in sleeps.waits)
        # a Retry-After beyond the bound is surfaced at once instead of waited out
        sleeps = Sleeps()
        bounded = RetryPolicy(attempts=3, max_retry_after=10)
        async with client_for(judge, sleeps, retry=bounded, **local) as client:
            with pytest.raises(JudgeRateLimited, match="at most 1 submissions a minute"):
                await client.submit(candidate)
        assert sleeps.waits == []
    with running_judge(new_judge_dir(tmp_path), "--daily-quota", "1") as judge:
        sleeps = Sleeps()
        async with client_for(judge, sleeps, **local) as client:
            await client.submit(candidate)
            with pytest.raises(JudgeQuotaError) as quota_error:
                await client.submit(candidate)
        assert sleeps.waits == []  # retrying today cannot help
        assert quota_error.value.quota is not None
        assert (quota_error.value.quota.used, quota_error.value.quota.limit) == (1, 1)
        assert "resets at 00:00 Asia/Shanghai" in str(quota_error.value)


async def test_endpoint_paths_come_from_the_configuration(tmp_path: Path) -> None:
    require_tools()
    with running_judge(new_judge_dir(tmp_path)) as judge:
        moved = JudgeEndpoints(login="/api/nope")
        async with client_for(judge, endpoints=moved) as client:
            with pytest.raises(JudgeNotFound):
                await client.quota()
        no_quota = JudgeEndpoints(quota=None)
        async with client_for(judge, endpoints=no_quota) as client:
            assert await client.quota() is None
        table = {
            "base_url": judge.url,
            "backend": "local",
            "upload": "files",
            "endpoints": {"submission": "/api/submissions/{submission_id}"},
            "retry": {"attempts": 2},
        }
        config = JudgeClientConfig.from_mapping(table, judge.token)
        assert config.retry.attempts == 2 and config.upload == "files"
        with pytest.raises(ValueError, match="unknown judge client settings: colour"):
            JudgeClientConfig.from_mapping({**table, "colour": "red"}, judge.token)


async def test_the_official_client_refuses_c_port_sources_before_sending_anything() -> None:
    """The contest site takes Ascend C sources only: a `cpu` bundle costs no request (nobody
    listens on the port, so any try would end as JudgeUnavailable, after backoff waits)."""
    config = JudgeClientConfig(base_url=f"http://127.0.0.1:{free_port()}", token="t")
    sleeps = Sleeps()
    async with HttpJudgeClient(config, sleep=sleeps) as client:
        for toolchain in ("cpu", "gcc"):
            candidate = bundle()
            candidate = CandidateBundle.create(
                candidate.operator, candidate.files, toolchain=toolchain
            )
            with pytest.raises(JudgeRejected, match="Ascend C sources only") as caught:
                await client.submit(candidate)
            assert "nothing was sent" in str(caught.value)
            with pytest.raises(JudgeRejected, match="Ascend C sources only"):
                await client.resubmit(candidate, idempotency_key="k")
        assert sleeps.waits == [] and client.logins == 0
