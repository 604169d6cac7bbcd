"""An httpx client for a judge that speaks docs/judge-api.md: the contest site or our own.

Base URL, endpoint paths, login and upload format come from `JudgeClientConfig`, so a real
contest site with other paths can be adapted by configuration. Failures are typed:

    connection error, 5xx  retried with exponential backoff (jittered), then JudgeUnavailable
    429 rate_limited       retried after Retry-After (bounded), then JudgeRateLimited
    429 quota_exceeded     JudgeQuotaError at once (retrying today cannot help)
    401                    one fresh login and one retry, then JudgeAuthError
    400 / 404              JudgeRejected / JudgeNotFound with the judge's own message
    a `cpu` bundle         JudgeRejected before anything is sent, by the `official` backend
                           (the contest site takes Ascend C sources only)

Submissions carry an Idempotency-Key that stays the same across retries, so a retried upload
whose first answer was lost is not counted twice. Tokens never appear in a repr, a log line or
an exception message.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from justkernel.core.targets import TOOLCHAIN_IDS, playbook_target
from justkernel.evaluation.protocol import (
    CandidateBundle,
    JudgeAuthError,
    JudgeError,
    JudgeNotFound,
    JudgeQuotaError,
    JudgeRateLimited,
    JudgeRejected,
    JudgeUnavailable,
    OfficialResult,
    PointResult,
    QuotaInfo,
    SubmissionStatus,
)
from justkernel.evaluation.submission_files import encode_bundle

MAX_MESSAGE = 300


@dataclass(frozen=True)
class JudgeEndpoints:
    login: str = "/api/login"
    submit: str = "/api/submissions"
    submission: str = "/api/submissions/{submission_id}"
    submissions: str | None = "/api/submissions"  # the newest submissions, to find a lost one
    quota: str | None = "/api/quota"  # None: the site does not report usage


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries per request in all
    base_seconds: float = 0.5  # first backoff; doubles per try, with jitter
    max_seconds: float = 30.0  # cap of one backoff
    max_retry_after: float = 120.0  # a longer Retry-After is surfaced, not waited out

    def backoff(self, attempt: int) -> float:
        return min(self.max_seconds, self.base_seconds * 2**attempt) * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class JudgeClientConfig:
    base_url: str
    token: str = field(repr=False)
    backend: str = "official"  # the label results carry: local or official
    endpoints: JudgeEndpoints = field(default_factory=JudgeEndpoints)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    login: bool = True  # False: send the token itself as the bearer
    upload: str = "zip"  # zip (the contest's format) or files
    timeout_seconds: float = 30.0
    quota_error_codes: tuple[str, ...] = ("quota_exceeded", "insufficient_quota")
    # the judge answers a repeated Idempotency-Key with the submission it made for it (ours
    # does); False: a lost submission is looked up in the listing before it is sent again
    idempotency_keys: bool = True

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], token: str) -> JudgeClientConfig:
        """From a config table such as `[evaluation.official]`: base_url, backend, login,
        upload, timeout_seconds, quota_error_codes, [endpoints], [retry]."""
        known = {f.name for f in fields(cls)} - {"token", "endpoints", "retry"}
        unknown = set(data) - known - {"endpoints", "retry"}
        if unknown:
            raise ValueError(f"unknown judge client settings: {', '.join(sorted(unknown))}")
        values = {k: v for k, v in data.items() if k in known}
        if "quota_error_codes" in values:
            values["quota_error_codes"] = tuple(values["quota_error_codes"])
        return cls(
            token=token,
            endpoints=JudgeEndpoints(**data.get("endpoints", {})),
            retry=RetryPolicy(**data.get("retry", {})),
            **values,
        )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value[:40] if isinstance(value, str) else None


def parse_result(data: Mapping[str, Any]) -> OfficialResult:
    """A submission document (docs/judge-api.md) as an OfficialResult; missing stays None."""
    try:
        status = SubmissionStatus(data["status"])
        points = tuple(
            PointResult(
                id=str(p["id"]),
                passed=p.get("passed") is True,
                error_ratio=_number(p.get("error_ratio")),
                time_us=_number(p.get("time_us")),
                best_time_us=_number(p.get("best_time_us")),
                outcome=p.get("outcome") if isinstance(p.get("outcome"), str) else None,
                error_bucket=_text(p.get("error_bucket")),
            )
            for p in data.get("points") or ()
        )
        return OfficialResult(
            submission_id=str(data["submission_id"]),
            status=status,
            points=points,
            prof_sum_us=_number(data.get("prof_sum_us")),
            raw=dict(data),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise JudgeError(f"the judge sent a result this client cannot read: {exc}") from None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _body(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class HttpJudgeClient:
    """`EvaluationClient` over HTTP; one instance per judge, safe for concurrent calls."""

    def __init__(
        self,
        config: JudgeClientConfig,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.backend = config.backend
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=config.base_url.rstrip("/"), timeout=config.timeout_seconds
        )
        self._bearer: str | None = None if config.login else config.token
        self._login_lock = asyncio.Lock()
        self.logins = 0  # how often this client logged in (a 401 makes it log in again)

    def __repr__(self) -> str:
        return f"HttpJudgeClient(backend={self.backend!r}, base_url={self.config.base_url!r})"

    async def __aenter__(self) -> HttpJudgeClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- plumbing ------------------------------------------------------------------------------
    def _safe(self, text: str) -> str:
        """A judge's message made safe to log: clipped, and no token in it."""
        text = str(text)[:MAX_MESSAGE]
        for secret in (self.config.token, self._bearer):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _message(self, response: httpx.Response, fallback: str) -> str:
        body = _body(response)
        detail = body.get("detail") or body.get("message") or body.get("error") or fallback
        return self._safe(f"{self.backend} judge: {detail} (HTTP {response.status_code})")

    async def _login(self, stale: str | None) -> None:
        async with self._login_lock:
            if self._bearer is not None and self._bearer != stale:
                return  # another call logged in meanwhile
            response = await self._send(
                "POST", self.config.endpoints.login, {"token": self.config.token}, auth=False
            )
            token = _body(response).get("session_token") or _body(response).get("access_token")
            if not isinstance(token, str) or not token:
                raise JudgeAuthError(f"{self.backend} judge: login gave no session token")
            self._bearer = token
            self.logins += 1

    async def _send(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        auth: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One logical request with the retry policy; returns a 2xx response or raises."""
        retry = self.config.retry
        relogged = False
        attempt = 0
        while True:
            if auth and self._bearer is None:
                await self._login(None)
            sent_with = self._bearer
            hdrs = dict(headers or {})
            if auth and sent_with:
                hdrs["Authorization"] = f"Bearer {sent_with}"
            try:
                response = await self._http.request(method, path, json=payload, headers=hdrs)
            except httpx.TransportError as exc:
                attempt += 1
                if attempt >= retry.attempts:
                    raise JudgeUnavailable(
                        f"{self.backend} judge at {self.config.base_url} unreachable "
                        f"({type(exc).__name__}) after {attempt} tries"
                    ) from None
                await self._sleep(retry.backoff(attempt - 1))
                continue
            status = response.status_code
            if status < 400:
                return response
            if status == 401 and auth and self.config.login and not relogged:
                relogged = True
                await self._login(sent_with)
                continue
            if status in (401, 403):
                raise JudgeAuthError(self._message(response, "not authorized"))
            if status == 429:
                await self._on_429(response, attempt)
                attempt += 1
                continue
            if status >= 500:
                attempt += 1
                if attempt >= retry.attempts:
                    raise JudgeUnavailable(self._message(response, "server error"))
                await self._sleep(retry.backoff(attempt - 1))
                continue
            if status == 404:
                raise JudgeNotFound(self._message(response, "not found"))
            raise JudgeRejected(self._message(response, "request refused"))

    async def _on_429(self, response: httpx.Response, attempt: int) -> None:
        """Raise for a quota error or when retries are spent; otherwise wait as told."""
        body = _body(response)
        wait = _retry_after(response)
        if body.get("error") in self.config.quota_error_codes:
            raise JudgeQuotaError(self._message(response, "quota used"), _quota(body.get("quota")))
        retry = self.config.retry
        if attempt + 1 >= retry.attempts or (wait is not None and wait > retry.max_retry_after):
            raise JudgeRateLimited(self._message(response, "rate limited"), wait)
        await self._sleep(wait if wait is not None else retry.backoff(attempt))

    # -- the interface -------------------------------------------------------------------------
    def _check_target(self, bundle: CandidateBundle) -> None:
        """The contest site evaluates Ascend C sources only: a C port bundle is refused here,
        before anything is sent (it would cost a submission of the day's quota)."""
        known = bundle.toolchain in TOOLCHAIN_IDS
        if self.backend == "official" and not (
            known and playbook_target(bundle.toolchain) == "ascendc"
        ):
            raise JudgeRejected(
                f"official judge: it evaluates Ascend C sources only; this bundle is written "
                f"for toolchain {bundle.toolchain!r}, not the Ascend C project. Run the team on "
                f"'ascendc-cpu' to get sources it accepts; nothing was sent"
            )

    async def submit(self, bundle: CandidateBundle, *, idempotency_key: str | None = None) -> str:
        self._check_target(bundle)
        body = encode_bundle(bundle, upload=self.config.upload)
        key = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        response = await self._send("POST", self.config.endpoints.submit, body, headers=key)
        sid = _body(response).get("submission_id")
        if not isinstance(sid, str) or not sid:
            raise JudgeError(f"{self.backend} judge: the answer named no submission id")
        return sid

    async def resubmit(self, bundle: CandidateBundle, *, idempotency_key: str) -> str:
        self._check_target(bundle)
        if not self.config.idempotency_keys:
            found = await self._find(bundle)
            if found is not None:
                return found
        return await self.submit(bundle, idempotency_key=idempotency_key)

    async def _find(self, bundle: CandidateBundle) -> str | None:
        """The id of a listed submission with this bundle's source hash and candidate."""
        if self.config.endpoints.submissions is None:
            return None
        listed = _body(await self._send("GET", self.config.endpoints.submissions))
        for doc in listed.get("submissions") or ():
            if not isinstance(doc, Mapping) or doc.get("source_sha256") != bundle.source_sha256:
                continue
            client = doc.get("client")
            if isinstance(client, Mapping) and client.get("candidate_id") not in (
                None,
                bundle.candidate_id,
            ):
                continue
            sid = doc.get("submission_id")
            if isinstance(sid, str) and sid:
                return sid
        return None

    async def result(self, submission_id: str) -> OfficialResult:
        path = self.config.endpoints.submission.format(submission_id=submission_id)
        return parse_result(_body(await self._send("GET", path)))

    async def wait(
        self, submission_id: str, *, max_seconds: float = 600.0, poll_seconds: float = 1.0
    ) -> OfficialResult:
        deadline = time.monotonic() + max_seconds
        while True:
            result = await self.result(submission_id)
            if result.status.done:
                return result
            if time.monotonic() >= deadline:
                raise JudgeError(
                    f"{self.backend} judge: {submission_id} still {result.status.value} "
                    f"after {max_seconds:.0f} s"
                )
            await self._sleep(poll_seconds)

    async def quota(self) -> QuotaInfo | None:
        if self.config.endpoints.quota is None:
            return None
        return _quota(_body(await self._send("GET", self.config.endpoints.quota)))


def _quota(data: Any) -> QuotaInfo | None:
    if not isinstance(data, Mapping):
        return None
    try:
        resets = data.get("resets_at")
        return QuotaInfo(
            used=int(data["used"]),
            limit=int(data["limit"]),
            resets_at=datetime.fromisoformat(resets) if isinstance(resets, str) else None,
        )
    except (KeyError, TypeError, ValueError):
        return None
