"""The app factory: wires the web layer explicitly around one `Lab` (no hidden globals)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from justkernel import __version__
from justkernel.a2a.endpoint import A2AEndpoint, a2a_routes
from justkernel.lab import Lab
from justkernel.paths import resources_dir
from justkernel.settings.models import load_model_presets
from justkernel.store.teams import UnknownTeam
from justkernel.web import (
    api,
    approvals_api,
    config_api,
    control_api,
    dashboard_api,
    forms,
    lineage_api,
    pipeline_api,
    transfer_api,
)
from justkernel.web.auth import SESSION_SECONDS, AuthMiddleware, AuthState, session_cookie_name
from justkernel.web.control import JudgerControls, RunController
from justkernel.web.demo import DemoPlayer
from justkernel.web.judger_controls import LabJudgerControls
from justkernel.web.request_guard import RequestGuard, ServedOrigin
from justkernel.web.response_cache import ResponseCache
from justkernel.web.security_headers import SecurityHeaders
from justkernel.web.task_settings import TaskStore
from justkernel.web.throughput import ReceiptTimes
from justkernel.web.url_guard import NoNulInUrl
from justkernel.web.views import RunViews


async def health(_request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


async def bootstrap(request: Request) -> Response:
    """Trade the one-time token from the terminal link for a session cookie."""
    auth: AuthState = request.app.state.auth
    if not auth.consume_bootstrap(request.query_params.get("token", "")):
        return JSONResponse(
            {
                "error": "unauthorized",
                "detail": "this link's token is wrong or was already used; "
                "restart the server for a new link",
            },
            status_code=401,
        )
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        session_cookie_name(request.app.state.served.port),
        auth.new_session_cookie(),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def create_app(
    lab: Lab,
    auth: AuthState,
    *,
    web_dir: Path | None = None,
    controller: RunController | None = None,
    judger: JudgerControls | None = None,
    demo: DemoPlayer | None = None,
    demo_only: bool = False,
    start_demo: bool = False,
    a2a: A2AEndpoint | None = None,
    served: ServedOrigin | None = None,
) -> Starlette:
    """The whole web layer around one lab. `controller` drives runs (the full server);
    `demo_only` is `justkernel demo`: the recorded session, no configuration, no credentials;
    `start_demo` starts a playback when the server starts (`serve --demo`). `served` is where
    the lab is reached (default: the settings' host and port); other Hosts are refused."""
    settings = lab.settings
    served = served or ServedOrigin.for_bind(settings.host, settings.port, settings.public_host)
    static_dir = web_dir or resources_dir() / "web"
    views = RunViews(lab.events)
    if judger is None and not demo_only:
        judger = LabJudgerControls(
            lab, presets=lambda: load_model_presets(lab.settings.models_local_file)
        )

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if demo is not None and start_demo:
            await demo.start()
        warming = asyncio.create_task(views.warm(lab.runs))
        try:
            yield
        finally:
            warming.cancel()
            if demo is not None:
                await demo.stop()
            if controller is not None:
                await controller.close()

    routes = [
        Route("/health", health),
        Route("/auth/bootstrap", bootstrap),
        *api.routes,
        *dashboard_api.routes,
        *config_api.routes,
        *control_api.routes,
        *transfer_api.routes,
        *pipeline_api.routes,
        *lineage_api.routes,
        *approvals_api.routes,
        *(a2a_routes(a2a) if a2a is not None else []),
        Mount("/", StaticFiles(directory=static_dir, html=True), name="web"),
    ]
    handlers: dict[Any, Any] = {
        **api.exception_handlers,
        **dashboard_api.exception_handlers,
        **config_api.exception_handlers,
        **forms.exception_handlers,
        **transfer_api.exception_handlers,
        **pipeline_api.exception_handlers,
        **lineage_api.exception_handlers,
        **approvals_api.exception_handlers,
        UnknownTeam: control_api.unknown_thing,
    }
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(NoNulInUrl),  # PostgreSQL refuses NUL in text: 400, not a 500
            Middleware(RequestGuard, served=served, body_types=transfer_api.body_types),
            # /a2a/ checks each team's own bearer token itself
            Middleware(
                AuthMiddleware,
                auth=auth,
                cookie_name=session_cookie_name(served.port),
                open_prefixes=("/a2a/",) if a2a else (),
            ),
        ],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.lab = lab
    app.state.auth = auth
    app.state.served = served
    app.state.views = views
    app.state.receipt_times = ReceiptTimes(lab.blobs)
    app.state.pipelines = pipeline_api.PipelineViews(lab)
    app.state.responses = ResponseCache()
    app.state.controller = controller
    app.state.judger = judger
    app.state.demo = demo
    app.state.demo_only = demo_only
    app.state.tasks = None if demo_only else TaskStore(lab.settings.resolved_data_dir)
    return app
