"""The judge's HTTP API against the real `justkernel judge-server`: login and 401, bad bundles
refused with a clear 400, a submission burst answered 429 with Retry-After, idempotent
retries, and the daily quota turning at 00:00 Asia/Shanghai (an in-process judge whose clock
the test moves)."""

from __future__ import annotations

import base64
import io
import json
import stat
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from justkernel.evaluation.protocol import CandidateBundle
from justkernel.evaluation.submission_files import encode_bundle
from justkernel.operators import load_operator
from tests.support.judge import (
    Clock,
    RunningJudge,
    ascendc_bundle,
    bundle,
    judge_in_thread,
    new_judge_dir,
    parse_utc,
    running_judge,
)
from tests.workers.test_evaluator_shared import require_tools

pytestmark = pytest.mark.timeout(300)
KERNEL = "op_kernel/cmg_kernel.c"


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJudge]:
    require_tools(valgrind=True)
    with running_judge(new_judge_dir(tmp_path_factory.mktemp("api"))) as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post(judge_url: str, body: object, token: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{judge_url}/api/submissions",
        json=body,
        headers={**bearer(token), **headers},
        timeout=30,
    )


def zip_of(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> str:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return base64.b64encode(out.getvalue()).decode()


def test_the_cli_prints_the_url_and_where_the_token_is_never_the_token(
    judge: RunningJudge,
) -> None:
    text = "".join(judge.output)
    assert judge.url.startswith("http://127.0.0.1:")
    assert judge.token_path == judge.judge_dir / "token"
    assert judge.token not in text
    assert stat.S_IMODE(judge.judge_dir.stat().st_mode) == 0o700
    for name in ("token", "hidden_seed", "hidden_cases.toml", "judge.db"):
        assert stat.S_IMODE((judge.judge_dir / name).stat().st_mode) == 0o600, name
    health = httpx.get(f"{judge.url}/api/health").json()
    assert health == {
        "ok": True,
        "operator": "confusion_mul_grad",
        "toolchains": ["ascendc-cpu", "cpu"],
        "points": [f"h{i:02d}" for i in range(1, 16)],
    }


def test_every_route_but_health_and_login_needs_a_valid_bearer(judge: RunningJudge) -> None:
    routes = [("GET", "/api/submissions"), ("GET", "/api/submissions/sub-x"), ("GET", "/api/quota")]
    routes.append(("POST", "/api/submissions"))
    for method, path in routes:
        for headers in ({}, bearer("wrong"), {"Authorization": judge.token}):
            r = httpx.request(method, f"{judge.url}{path}", headers=headers, json={})
            assert r.status_code == 401, (method, path, headers)
            assert r.json()["error"] == "unauthorized"
    for wrong in ("wrong", "tökén", 42, None):
        r = httpx.post(f"{judge.url}/api/login", json={"token": wrong})
        assert r.status_code == 401 and r.json()["error"] == "invalid_token"
    latin = httpx.get(f"{judge.url}/api/quota", headers={"Authorization": b"Bearer t\xf6ken"})
    assert latin.status_code == 401
    login = httpx.post(f"{judge.url}/api/login", json={"token": judge.token}).json()
    assert login["token_type"] == "bearer" and login["expires_in"] > 0
    session = login["session_token"]
    assert session != judge.token
    for token in (session, judge.token):  # a session, or the login token used directly
        quota = httpx.get(f"{judge.url}/api/quota", headers=bearer(token)).json()
        assert quota["limit"] == 50 and quota["used"] >= 0
    assert (
        httpx.get(f"{judge.url}/api/submissions/sub-x", headers=bearer(session)).status_code == 404
    )


BAD_FILES = [
    ({"../op_kernel/cmg_kernel.c": b"x"}, "'..'"),
    ({"/etc/passwd": b"x"}, "absolute"),
    ({"op_kernel/../harness/harness.c": b"x"}, "'..'"),
    ({"op_kernel\\cmg_kernel.c": b"x"}, "letters, digits"),
    ({"harness/harness.c": b"int main;"}, "fixed by the operator"),
    ({"include/cmg_abi.h": b"x"}, "fixed by the operator"),
    ({"Makefile": b"x"}, "fixed by the operator"),
    ({"notes.md": b"x"}, "not an editable file"),
    ({KERNEL: b"x" * ((1 << 20) + 1)}, "over 1048576"),
    ({f"op_kernel/f{i}.h": b"x" for i in range(65)}, "more than 64"),
    ({}, "no files"),
]


@pytest.mark.parametrize(("files", "message"), BAD_FILES)
def test_bad_bundles_are_refused_with_a_clear_message(
    judge: RunningJudge, files: dict[str, bytes], message: str
) -> None:
    for upload in ("files", "zip"):
        if upload == "zip" and any("\\" in k or k.startswith("/") for k in files):
            continue  # zipfile itself normalises these names
        candidate = CandidateBundle.create("confusion_mul_grad", files, toolchain="cpu")
        body = encode_bundle(candidate, upload=upload)
        r = post(judge.url, body, judge.token)
        assert r.status_code == 400, (upload, r.text)
        assert r.json()["error"] == "bad_bundle"
        assert message in r.json()["detail"], r.json()["detail"]


TARGET_REFUSALS = [
    ("cpu", "ascendc-cpu", "op_host/cmg_tiling.c: a file of the cpu project (toolchain 'cpu')"),
    ("ascendc-cpu", "cpu", "a file of the ascendc project"),
    ("ascendc-cpu", "cann", "this judge evaluates ascendc-cpu, cpu only; it builds with the"),
    ("ascendc-cpu", "tpu", "toolchain 'tpu': expected one of ascendc-cpu, cpu, cann"),
]


@pytest.mark.parametrize(("sources", "toolchain", "message"), TARGET_REFUSALS)
def test_a_submission_for_the_wrong_target_is_refused_before_it_is_queued(
    judge: RunningJudge, sources: str, toolchain: str, message: str
) -> None:
    """C port files named as Ascend C (or the reverse) would be ignored by the build and the
    template judged in their place; a toolchain this judge cannot run is refused too."""
    files = dict(bundle().files if sources == "cpu" else ascendc_bundle().files)
    body = encode_bundle(CandidateBundle.create("confusion_mul_grad", files))
    r = post(judge.url, {**body, "toolchain": toolchain}, judge.token)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "bad_bundle"
    assert message in r.json()["detail"], r.json()["detail"]
    listed = httpx.get(f"{judge.url}/api/submissions", headers=bearer(judge.token)).json()
    assert all(s["source_sha256"] != body["source_sha256"] for s in listed["submissions"])


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_malformed_uploads_are_refused(judge: RunningJudge) -> None:
    good = encode_bundle(bundle())
    link = zipfile.ZipInfo(KERNEL)
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    bomb = zipfile.ZipInfo(KERNEL)
    bomb.compress_type = zipfile.ZIP_DEFLATED
    cases = [
        ({**good, "operator": "other_op"}, "this judge evaluates"),
        ({**good, "archive": "%%%"}, "not valid base64"),
        ({**good, "archive": base64.b64encode(b"not a zip").decode()}, "not a ZIP"),
        ({**good, "source_sha256": "0" * 64}, "does not match"),
        ({**good, "files": {}}, "exactly one of"),
        ({**good, "archive": zip_of([(link, b"/etc/shadow")])}, "links are not allowed"),
        ({**good, "archive": zip_of([(bomb, b"\0" * (2 << 20))])}, "over 1048576"),
        ({**good, "archive": zip_of([(KERNEL, b"a"), (KERNEL, b"b")])}, "appears twice"),
        ({**good, "client": {"team": 5}}, "client.team"),
        (["not", "an", "object"], "JSON object"),
    ]
    for body, message in cases:
        r = post(judge.url, body, judge.token)
        assert r.status_code == 400, (message, r.text)
        assert message in r.json()["detail"], (message, r.json())
    huge = httpx.post(
        f"{judge.url}/api/submissions",
        content=b"{" + b" " * (9 << 20) + b"}",
        headers={**bearer(judge.token), "content-type": "application/json"},
        timeout=60,
    )
    assert huge.status_code == 400 and "limit is" in huge.json()["detail"]
    not_json = httpx.post(
        f"{judge.url}/api/submissions", content=b"{oops", headers=bearer(judge.token)
    )
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["detail"]
    quota = httpx.get(f"{judge.url}/api/quota", headers=bearer(judge.token)).json()
    assert quota["used"] == 0  # nothing refused was counted


def test_a_repeated_idempotency_key_returns_the_same_submission(judge: RunningJudge) -> None:
    body = encode_bundle(bundle(note="idempotent"), upload="files")
    before = httpx.get(f"{judge.url}/api/quota", headers=bearer(judge.token)).json()["used"]
    first = post(judge.url, body, judge.token, **{"Idempotency-Key": "k-1"})
    again = post(judge.url, body, judge.token, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 202 and again.status_code == 200
    assert first.json()["submission_id"] == again.json()["submission_id"]
    assert first.json()["status"] == "queued" and first.json()["points"] == []
    after = httpx.get(f"{judge.url}/api/quota", headers=bearer(judge.token)).json()["used"]
    assert after == before + 1
    listed = httpx.get(f"{judge.url}/api/submissions", headers=bearer(judge.token)).json()
    assert first.json()["submission_id"] in [s["submission_id"] for s in listed["submissions"]]


def test_a_burst_beyond_the_rate_is_answered_429_with_retry_after(tmp_path: Path) -> None:
    require_tools(valgrind=True)
    body = encode_bundle(bundle())
    with running_judge(new_judge_dir(tmp_path), "--submissions-per-minute", "3") as judge:
        answers = [post(judge.url, body, judge.token) for _ in range(5)]
        assert [r.status_code for r in answers] == [202, 202, 202, 429, 429]
        limited = answers[3]
        assert limited.json()["error"] == "rate_limited"
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        assert limited.json()["retry_after"] == int(limited.headers["Retry-After"])
        quota = httpx.get(f"{judge.url}/api/quota", headers=bearer(judge.token)).json()
        assert quota["used"] == 3  # the refused ones do not count against the day


def test_the_request_rate_per_address_covers_every_route(tmp_path: Path) -> None:
    with judge_in_thread(new_judge_dir(tmp_path), requests_per_minute=5) as url:
        codes = [httpx.get(f"{url}/api/health").status_code for _ in range(7)]
        assert codes == [200] * 5 + [429] * 2
        r = httpx.post(f"{url}/api/login", json={"token": "guess"})
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1


def test_the_daily_quota_is_a_distinct_error_and_resets_at_midnight_shanghai(
    tmp_path: Path,
) -> None:
    require_tools(valgrind=True)
    judge_dir = new_judge_dir(tmp_path)
    token = (judge_dir / "token").read_text().strip()
    clock = Clock(datetime(2026, 3, 1, 15, 58, 30, tzinfo=UTC))  # 23:58:30 in Shanghai
    body = encode_bundle(bundle())
    with judge_in_thread(judge_dir, daily_quota=2, clock=clock) as url:
        assert [post(url, body, token).status_code for _ in range(2)] == [202, 202]
        refused = post(url, body, token)
        assert refused.status_code == 429
        answer = refused.json()
        assert answer["error"] == "quota_exceeded"  # not rate_limited: retrying will not help
        assert answer["quota"]["used"] == 2 and answer["quota"]["remaining"] == 0
        assert answer["quota"]["day"] == "2026-03-01"
        assert parse_utc(answer["quota"]["resets_at"]) == datetime(2026, 3, 1, 16, tzinfo=UTC)
        assert int(refused.headers["Retry-After"]) == 90
        clock.now += timedelta(seconds=89)  # 23:59:59 Shanghai: still the same day
        assert post(url, body, token).json()["error"] == "quota_exceeded"
        clock.now += timedelta(seconds=2)  # 00:00:01 Shanghai: a new contest day
        accepted = post(url, body, token)
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["quota"] == {
            "used": 1,
            "limit": 2,
            "remaining": 1,
            "day": "2026-03-02",
            "resets_at": "2026-03-02T16:00:00+00:00",
        }
        assert accepted.json()["submitted_at"].startswith("2026-03-01T16:00:01")


def test_nothing_in_a_listing_names_a_hidden_shape(judge: RunningJudge) -> None:
    listed = httpx.get(f"{judge.url}/api/submissions", headers=bearer(judge.token)).json()
    text = json.dumps(listed)
    hidden = (judge.judge_dir / "hidden_cases.toml").read_text()
    for line in hidden.splitlines():
        if line.startswith("input"):
            assert line.split("=", 1)[1].strip() not in text
    assert load_operator().name in text
