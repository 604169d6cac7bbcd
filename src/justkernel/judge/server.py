"""The local judge service: the official evaluation's API shape over the hidden points.

    POST /api/login                 {token} -> {session_token, token_type, expires_in}
    POST /api/submissions           bearer; {operator, toolchain, archive | files,
                                    source_sha256, client} -> 202 {submission_id, status, ...}
    GET  /api/submissions/{id}      bearer -> {status, points[], prof_sum_us, ...}
    GET  /api/submissions           bearer -> {submissions: [...]} (newest first)
    GET  /api/quota                 bearer -> {used, limit, remaining, day, resets_at}
    GET  /api/health                open   -> {ok, operator, toolchains, points: [h01..]}

A submission names the target its files are written for: `toolchain` "ascendc-cpu" (the
default: the Ascend C project, evaluated by the ascendc-cpu toolchain) or "cpu" (the C port);
"cann" is refused (this judge has no Ascend toolkit). Its files must be that target's editable
files, not the other project's.

The bearer is the login token itself or a session token from /api/login. Answers: 401 without
a valid bearer, 429 `rate_limited` (Retry-After) beyond the per-account submission rate or the
per-address request rate, 429 `quota_exceeded` once the day's quota (00:00 Asia/Shanghai) is
used, 400 `bad_bundle` for a refused upload. Responses name points by id only; shapes and
inputs stay in the judge folder, and results are published coarsely (pass/fail, error buckets,
noised rounded times: public.py) so feedback cannot rebuild the points. Full reference:
docs/judge-api.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from justkernel.evaluation.submission_files import BundleError, BundleLimits, decode_bundle
from justkernel.jsonsafe import loads_bounded
from justkernel.judge.eval import JUDGED_TOOLCHAINS, JudgeEvaluation, time_source
from justkernel.judge.hidden_cases import load_or_create_hidden_cases
from justkernel.judge.limits import SlidingWindow, next_reset, quota_day, utc_now
from justkernel.judge.paths import JudgeFolder
from justkernel.judge.public import Publisher
from justkernel.judge.runner import JudgeRunner
from justkernel.judge.store import JudgeStore, StoredSubmission
from justkernel.operators import load_operator

ACCOUNT = "default"  # one login token, one account (the lab's), as on the contest site


@dataclass(frozen=True)
class JudgeConfig:
    folder: JudgeFolder
    operator: str = "confusion_mul_grad"
    submissions_per_minute: int = 10
    daily_quota: int = 50
    requests_per_minute: int = 600  # per client address, every /api route (login included)
    session_seconds: int = 12 * 3600
    sim_parallelism: int = 2
    limits: BundleLimits = field(default_factory=BundleLimits)
    clock: Callable[[], datetime] = utc_now  # quota day and timestamps; tests move it
    url: str | None = None  # announced in the judge folder while serving (for the local client)


def _error(status: int, code: str, detail: str, **extra: Any) -> JSONResponse:
    headers = {}
    if "retry_after" in extra:
        headers["Retry-After"] = str(extra["retry_after"])
    return JSONResponse({"error": code, "detail": detail, **extra}, status, headers=headers)


def _same(offered: str, token: str) -> bool:
    """Constant-time comparison that also takes non-ASCII input (str compare_digest does not)."""
    return hmac.compare_digest(offered.encode(), token.encode())


class Sessions:
    """Login token and session tokens (kept as SHA-256 only, in memory: a restart logs every
    client out, and the client logs in again on its next 401)."""

    def __init__(self, token: str, seconds: int) -> None:
        self._token = token
        self._seconds = seconds
        self._live: dict[str, float] = {}

    def login(self, offered: Any) -> str | None:
        if not isinstance(offered, str) or not _same(offered, self._token):
            return None
        now = time.time()
        self._live = {k: t for k, t in self._live.items() if t > now}  # drop expired ones
        session = secrets.token_urlsafe(32)
        self._live[hashlib.sha256(session.encode()).hexdigest()] = time.time() + self._seconds
        return session

    def account(self, header: str) -> str | None:
        if not header.startswith("Bearer "):
            return None
        offered = header[7:].strip()
        if _same(offered, self._token):
            return ACCOUNT
        expires = self._live.get(hashlib.sha256(offered.encode()).hexdigest())
        return ACCOUNT if expires is not None and expires > time.time() else None


class RequestRate:
    """Pure ASGI middleware: at most N /api requests per client address per minute."""

    def __init__(self, app: ASGIApp, per_minute: int) -> None:
        self.app = app
        self.window = SlidingWindow(per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/api/"):
            client = scope.get("client") or ("?", 0)
            wait = self.window.take(str(client[0]))
            if wait is not None:
                response = _error(429, "rate_limited", "too many requests", retry_after=wait)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class JudgeService:
    """The judge's state behind the routes: store, sessions, limits, evaluation, queue."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.definition = load_operator(config.operator)
        self.hidden = load_or_create_hidden_cases(config.folder.root, self.definition)
        self.point_ids = tuple(c.id for c in self.hidden)
        self.store = JudgeStore(config.folder.db_path)
        self.sessions = Sessions(config.folder.token(), config.session_seconds)
        self.submit_rate = SlidingWindow(config.submissions_per_minute)
        self.publisher = Publisher(config.folder.feedback_key())
        self.runner: JudgeRunner | None = None
        self.evaluation: JudgeEvaluation | None = None

    def quota(self, account: str) -> dict[str, Any]:
        now = self.config.clock()
        used = self.store.used(account, quota_day(now))
        return {
            "used": used,
            "limit": self.config.daily_quota,
            "remaining": max(0, self.config.daily_quota - used),
            "day": quota_day(now),
            "resets_at": next_reset(now).isoformat(),
        }

    def view(self, sub: StoredSubmission) -> dict[str, Any]:
        out: dict[str, Any] = {
            "submission_id": sub.id,
            "status": sub.status.value,
            "operator": sub.operator,
            "source_sha256": sub.source_sha256,
            "client": sub.client,
            "submitted_at": sub.submitted_at,
            "started_at": sub.started_at,
            "finished_at": sub.finished_at,
            "toolchain": sub.toolchain,
            "points": [],
            "prof_sum_us": None,
            "time_source": time_source(sub.toolchain),
        }
        if sub.result is not None:  # exact in the store; clients get the published view
            out.update(self.publisher.result(sub.result, sub.source_sha256))
        if sub.error is not None:
            out["error"] = sub.error
        return out

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        evaluation = JudgeEvaluation.create(
            self.config.folder,
            self.definition,
            self.hidden,
            sim_parallelism=self.config.sim_parallelism,
        )
        self.evaluation = evaluation
        self.runner = JudgeRunner(self.store, evaluation, self.config.clock, self.publisher)
        task = asyncio.create_task(self.runner.run(), name="judge-runner")
        if self.config.url:
            self.config.folder.write_server_info(self.config.url)
        try:
            yield
        finally:
            if self.config.url:
                self.config.folder.clear_server_info()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await evaluation.close()
            self.store.close()


def _service(request: Request) -> JudgeService:
    return request.app.state.judge


def _account(request: Request) -> str | None:
    return _service(request).sessions.account(request.headers.get("authorization", ""))


def _unauthorized() -> JSONResponse:
    return _error(401, "unauthorized", "log in with the judge's token (POST /api/login)")


async def _read_json(request: Request, limit: int) -> Any:
    """The body as JSON, refusing more than `limit` bytes before reading them all."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BundleError(f"request body of {declared} bytes; the limit is {limit}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BundleError(f"request body larger than {limit} bytes")
    try:
        return loads_bounded(bytes(body))
    except ValueError as exc:
        raise BundleError(f"request body: {exc}") from None


async def health(request: Request) -> Response:
    svc = _service(request)
    return JSONResponse(
        {
            "ok": True,
            "operator": svc.definition.name,
            "toolchains": JUDGED_TOOLCHAINS,
            "points": svc.point_ids,
        }
    )


async def login(request: Request) -> Response:
    try:
        body = await _read_json(request, 4096)
    except BundleError as exc:
        return _error(400, "bad_request", str(exc))
    offered = body.get("token") if isinstance(body, dict) else None
    session = _service(request).sessions.login(offered)
    if session is None:
        return _error(401, "invalid_token", "the login token is wrong")
    seconds = _service(request).config.session_seconds
    return JSONResponse({"session_token": session, "token_type": "bearer", "expires_in": seconds})


async def submit(request: Request) -> Response:
    svc = _service(request)
    account = _account(request)
    if account is None:
        return _unauthorized()
    wait = svc.submit_rate.wait_seconds(account)
    if wait is not None:
        per = svc.config.submissions_per_minute
        return _error(429, "rate_limited", f"at most {per} submissions a minute", retry_after=wait)
    try:
        body = await _read_json(request, svc.config.limits.max_body_bytes)
        bundle = decode_bundle(
            body, svc.definition, svc.config.limits, toolchains=JUDGED_TOOLCHAINS
        )
    except BundleError as exc:
        return _error(400, "bad_bundle", str(exc))
    if svc.evaluation is not None:
        missing = await asyncio.to_thread(svc.evaluation.unavailable, bundle.toolchain)
        if missing:  # named, not located: what is missing, never where the judge looked
            needs = "; ".join(m.split(" (")[0] for m in missing)
            return _error(
                400,
                "bad_bundle",
                f"toolchain {bundle.toolchain!r}: this judge's host cannot run it (missing: "
                f"{needs}; `justkernel check` on that host says more)",
            )
    key = request.headers.get("idempotency-key") or None
    now = svc.config.clock()
    sub, created = svc.store.add(
        account=account,
        operator=svc.definition.name,
        quota_day=quota_day(now),
        submitted_at=now.isoformat(),
        source_sha256=bundle.source_sha256,
        files=bundle.files,
        client=bundle.client,
        idempotency_key=key[:200] if key else None,
        daily_limit=svc.config.daily_quota,
        toolchain=bundle.toolchain,
    )
    quota = svc.quota(account)
    if sub is None:
        reset = next_reset(now)
        return _error(
            429,
            "quota_exceeded",
            f"the daily quota of {svc.config.daily_quota} submissions is used; "
            "it resets at 00:00 Asia/Shanghai",
            retry_after=max(1, int((reset - now).total_seconds())),
            quota=quota,
        )
    if created:
        svc.submit_rate.record(account)
        if svc.runner is not None:
            svc.runner.notify()
    return JSONResponse({**svc.view(sub), "quota": quota}, 202 if created else 200)


async def submission(request: Request) -> Response:
    svc = _service(request)
    account = _account(request)
    if account is None:
        return _unauthorized()
    sub = svc.store.get(request.path_params["submission_id"])
    if sub is None or sub.account != account:
        return _error(404, "not_found", "no such submission")
    return JSONResponse(svc.view(sub))


async def submissions(request: Request) -> Response:
    svc = _service(request)
    account = _account(request)
    if account is None:
        return _unauthorized()
    return JSONResponse({"submissions": [svc.view(s) for s in svc.store.recent(account)]})


async def quota(request: Request) -> Response:
    account = _account(request)
    if account is None:
        return _unauthorized()
    return JSONResponse(_service(request).quota(account))


def create_judge_app(config: JudgeConfig) -> Starlette:
    """The judge as an ASGI app; the queue runs while the app's lifespan does."""
    svc = JudgeService(config)
    routes = [
        Route("/api/health", health),
        Route("/api/login", login, methods=["POST"]),
        Route("/api/submissions", submit, methods=["POST"]),
        Route("/api/submissions", submissions, methods=["GET"]),
        Route("/api/submissions/{submission_id}", submission, methods=["GET"]),
        Route("/api/quota", quota),
    ]
    app = Starlette(routes=routes, lifespan=svc.lifespan)
    app.add_middleware(RequestRate, per_minute=config.requests_per_minute)
    app.state.judge = svc
    return app
