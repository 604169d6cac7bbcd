"""The app factory: wires the web layer explicitly around one `Lab` (no hidden globals)."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from justkernel import __version__
from justkernel.lab import Lab
from justkernel.paths import resources_dir
from justkernel.web import api
from justkernel.web.auth import SESSION_COOKIE, SESSION_SECONDS, AuthMiddleware, AuthState


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
        SESSION_COOKIE,
        auth.new_session_cookie(),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def create_app(lab: Lab, auth: AuthState, *, web_dir: Path | None = None) -> Starlette:
    static_dir = web_dir or resources_dir() / "web"
    routes = [
        Route("/health", health),
        Route("/auth/bootstrap", bootstrap),
        *api.routes,
        Mount("/", StaticFiles(directory=static_dir, html=True), name="web"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(AuthMiddleware, auth=auth)],
        exception_handlers=api.exception_handlers,
    )
    app.state.lab = lab
    app.state.auth = auth
    return app
