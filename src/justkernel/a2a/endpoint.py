"""The A2A endpoint of the lab: one agent card and one JSON-RPC endpoint per team.

    /a2a/teams/{team_id}/                              JSON-RPC (a2a-sdk 1.3.0, protocol 1.0)
    /a2a/teams/{team_id}/.well-known/agent-card.json   the team's public card

One request handler, executor and task store serve every team; the team comes from the bearer
token. The SDK enforces no auth, so `TeamGuard` does: no or unknown token is 401, a token of
another team than the path's is 403. Tasks are owned by `run/team`, so a team never finds
another team's tasks (GetTask, ListTasks, SubscribeToTask, CancelTask and follow-ups answer
"task not found"). Cards are public and hold no secrets; the authenticated extended card
(GetExtendedAgentCard) adds the run and the team's display name.

A2A task state is a view kept by the SDK's DatabaseTaskStore in its own SQLite file
(DATA_DIR/a2a/tasks.db, one connection), so an inbox task waiting for its ack survives a
restart; the lab's own facts (receipts, candidates, deliveries, acks) live in the lab database.
"""

from __future__ import annotations

import os

os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")  # before the SDK loads

import json
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.agent_execution import SimpleRequestContextBuilder
from a2a.server.agent_execution.context import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import ServerCallContextBuilder, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore, TaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    CancelTaskRequest,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    SendMessageRequest,
    StringList,
    Task,
    TaskNotCancelableError,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_1_0
from google.protobuf.json_format import MessageToDict
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from justkernel import __version__
from justkernel.a2a.board import LabBoard
from justkernel.a2a.executor import IDENTITY_KEY, EvaluatorSource, LabAgentExecutor
from justkernel.a2a.jsonrpc_body import JsonRpcBodyCheck
from justkernel.lab import Lab
from justkernel.settings.redaction import register as register_secret
from justkernel.store.teams import Team, UnknownTeam
from justkernel.store.tokens import TeamIdentity

TEAM_ID_RE = re.compile(r"^team-\d{3}$")
RPC_URL_KEY = "justkernel.rpc_url"
PRIVATE_HEADERS = ("authorization", "cookie", "proxy-authorization")
MAX_BODY_BYTES = 8 * 1024 * 1024  # a candidate is a few source files; 4 MiB of them at most
SKILL_CARDS = (
    AgentSkill(
        id="submit_candidate",
        name="Submit a candidate",
        description=(
            "Send the candidate's editable files (file parts named by their project path, or "
            "a data part {relpath: text}); the lab builds them on the operator's template and "
            "runs every local case plus the cycle simulation. Artifacts: 'receipt' (the full "
            "receipt) and 'result' (status, cycles, candidate id when measured and frozen)."
        ),
        tags=["evaluation", "candidate"],
        examples=['{"op_kernel/cmg_kernel.c": "...", "op_host/cmg_tiling.c": "..."}'],
    ),
    AgentSkill(
        id="ask",
        name="Ask another team",
        description='Post a question on the lab board: data {"to": team id or "all", "text"}.',
        tags=["board"],
    ),
    AgentSkill(
        id="inbox",
        name="Read the inbox",
        description=(
            "Deliver the team's new board messages as artifacts. Official feedback keeps the "
            "task in input-required until ack_feedback is sent on it."
        ),
        tags=["board", "feedback"],
    ),
    AgentSkill(
        id="ack_feedback",
        name="Acknowledge feedback",
        description="A follow-up on an input-required inbox task: acknowledges its messages.",
        tags=["board", "feedback"],
    ),
)


def team_card(team_id: str, rpc_url: str, team: Team | None = None) -> AgentCard:
    """A team's card; with `team` (the authenticated extended card) it names the run too."""
    name = team.display_name if team else f"JustKernel {team_id}"
    where = f" in run {team.run_id}" if team else ""
    return AgentCard(
        name=name,
        description=(
            f"Team {team_id}{where} of a JustKernel lab: submit kernel candidates for "
            "evaluation, ask other teams, and receive official feedback. Skills are chosen "
            "with metadata.skill on the message."
        ),
        supported_interfaces=[
            AgentInterface(
                url=rpc_url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION_1_0
            )
        ],
        version=__version__,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False, extended_agent_card=True
        ),
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="bearer",
                    description="the team token printed by `justkernel a2a join`",
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=list(SKILL_CARDS),
    )


class TeamUser(User):
    def __init__(self, identity: TeamIdentity) -> None:
        self._identity = identity

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._identity.owner


def team_owner(context: ServerCallContext) -> str:
    """The task owner of a call: its team. A call without one owns nothing."""
    identity = context.state.get(IDENTITY_KEY)
    if not isinstance(identity, TeamIdentity):
        raise PermissionError("A2A call without a team identity")
    return identity.owner


class TeamContextBuilder(ServerCallContextBuilder):
    """The call context carries the guard's TeamIdentity and the request headers the SDK reads
    (A2A-Version), never the credentials: the SDK logs its call context at debug level."""

    def __init__(self, rpc_url: Callable[[Scope, str], str]) -> None:
        self._rpc_url = rpc_url

    def build(self, request: Request) -> ServerCallContext:
        identity: TeamIdentity = request.scope[IDENTITY_KEY]
        headers = {k: v for k, v in request.headers.items() if k not in PRIVATE_HEADERS}
        rpc_url = self._rpc_url(request.scope, identity.team_id)
        return ServerCallContext(
            user=TeamUser(identity),
            state={IDENTITY_KEY: identity, RPC_URL_KEY: rpc_url, "headers": headers},
            requested_extensions=get_requested_extensions(
                request.headers.getlist(HTTP_EXTENSION_HEADER)
            ),
        )


class FollowUpContextBuilder(SimpleRequestContextBuilder):
    """A follow-up that names only its task continues in that task's context. (The SDK would
    mint a fresh context id, which it then refuses once the task was reloaded from the store,
    e.g. an ack sent after a restart.)"""

    def __init__(self, store: TaskStore) -> None:
        super().__init__()
        self._store = store

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> RequestContext:
        if task_id and not context_id:
            stored = await self._store.get(task_id, context)  # owner-scoped
            if stored is not None:
                context_id = stored.context_id
        return await super().build(context, params, task_id, context_id, task)


class LabRequestHandler(DefaultRequestHandler):
    """The SDK's handler, except that feedback waiting for its ack cannot be cancelled: its
    deliveries belong to that task, and cancelling would leave them never acknowledged."""

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        task = await self.task_store.get(params.id, context)  # owner-scoped
        if (
            isinstance(task, Task)
            and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            and MessageToDict(task.metadata).get("skill") == "inbox"
        ):
            raise TaskNotCancelableError(message="this feedback waits for ack_feedback")
        return await super().on_cancel_task(params, context)


def _json(status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


class TeamGuard:
    """Pure ASGI middleware on a team's mount: bearer token → TeamIdentity, or 401/403.
    The public card is the only path it lets through without a token."""

    def __init__(self, app: ASGIApp, endpoint: A2AEndpoint) -> None:
        self.app = app
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        team_id = scope["path_params"].get("team_id", "")
        rest = scope["path"][len(scope.get("root_path", "")) :]
        if not TEAM_ID_RE.match(team_id):
            response = _json(404, "not_found", "no such team")
        elif rest == AGENT_CARD_WELL_KNOWN_PATH and scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        else:
            identity, response = await self._check(scope, team_id)
            if identity is not None:
                scope[IDENTITY_KEY] = identity
                await self.app(scope, receive, send)
                return
        await response(scope, receive, send)

    async def _check(self, scope: Scope, team_id: str) -> tuple[TeamIdentity | None, Response]:
        header = Request(scope).headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        identity = None
        if scheme.lower() == "bearer" and token.strip():
            identity = await self.endpoint.tokens.resolve(token.strip())
        if identity is None:
            challenge = {"WWW-Authenticate": 'Bearer realm="justkernel-a2a"'}
            detail = "send Authorization: Bearer <team token> (from `justkernel a2a join`)"
            return None, _json(401, "unauthorized", detail, challenge)
        register_secret(token.strip())  # a valid token never reaches a log line
        if identity.team_id != team_id:
            return None, _json(403, "forbidden", f"this token speaks for {identity.team_id}")
        try:
            team = await self.endpoint.registry.get(identity.run_id, identity.team_id)
        except UnknownTeam:
            return None, _json(403, "forbidden", "this team no longer exists")
        if team.status == "exited":
            return None, _json(403, "forbidden", "this team has left the run")
        return identity, Response(status_code=200)


class A2AEndpoint:
    """The A2A services of one lab process: request handler, executor, task store, tokens."""

    def __init__(
        self,
        lab: Lab,
        evaluator: EvaluatorSource,
        engine: AsyncEngine,
        origin: str | None = None,
        *,
        board: LabBoard,
    ) -> None:
        self.lab = lab
        # the lab's own origin ("http://127.0.0.1:4173"), for the cards' URLs; never taken from
        # the request's Host (a rebinding page would have the card point at its own server)
        self.origin = origin
        self.tokens = lab.tokens
        self.registry = lab.teams
        self.executor = LabAgentExecutor(lab, evaluator, board)
        self.engine = engine
        self.task_store = DatabaseTaskStore(engine, owner_resolver=team_owner)
        template = team_card("team-000", "http://127.0.0.1/")
        self.handler = LabRequestHandler(
            agent_executor=self.executor,
            task_store=self.task_store,
            agent_card=template,
            extended_agent_card=template,
            extended_card_modifier=self._extended_card,
            request_context_builder=FollowUpContextBuilder(self.task_store),
        )

    async def _extended_card(self, _card: AgentCard, context: ServerCallContext) -> AgentCard:
        identity: TeamIdentity = context.state[IDENTITY_KEY]
        team = await self.registry.get(identity.run_id, identity.team_id)
        return team_card(team.id, context.state[RPC_URL_KEY], team)

    def rpc_url(self, scope: Scope, team_id: str) -> str:
        """The team's JSON-RPC URL under the configured origin; without one (a bare test app),
        under the address the connection arrived on, which the client cannot choose."""
        origin = self.origin
        if origin is None:
            host, port = scope.get("server") or ("127.0.0.1", 80)
            origin = f"http://{f'[{host}]' if ':' in str(host) else host}:{port}"
        return f"{origin.rstrip('/')}/a2a/teams/{team_id}/"

    async def _public_card(self, request: Request) -> Response:
        team_id = request.path_params["team_id"]
        if not await self.registry.exists(team_id):
            return _json(404, "not_found", "no such team")
        rpc_url = self.rpc_url(request.scope, team_id)
        body = json.dumps(agent_card_to_dict(team_card(team_id, rpc_url)))
        return Response(body, media_type="application/json")

    def routes(self) -> list[BaseRoute]:
        team_routes: list[BaseRoute] = [
            Route(AGENT_CARD_WELL_KNOWN_PATH, self._public_card, methods=["GET"]),
            *create_jsonrpc_routes(
                self.handler, "/", context_builder=TeamContextBuilder(self.rpc_url)
            ),
        ]
        return [
            Mount(
                "/a2a",
                routes=[
                    Mount(
                        "/teams/{team_id}",
                        routes=team_routes,
                        # the guard first: only an authenticated team's body is read
                        middleware=[
                            Middleware(TeamGuard, endpoint=self),
                            Middleware(JsonRpcBodyCheck),
                        ],
                        max_body_size=MAX_BODY_BYTES,
                    )
                ],
            )
        ]

    async def aclose(self) -> None:
        await self.handler.aclose()
        await self.engine.dispose()


@asynccontextmanager
async def open_a2a(
    lab: Lab, evaluator: EvaluatorSource, origin: str | None = None, *, board: LabBoard
) -> AsyncIterator[A2AEndpoint]:
    """Open the A2A services for a lab; `evaluator` is an Evaluator or an async factory
    (called on the first submission, so a server that never evaluates never builds one);
    `origin` is the lab's own URL, which the agent cards name; `board` the lab's one board
    (`app.lab_board`, the one its runs' schedulers post through)."""
    folder = lab.settings.resolved_data_dir / "a2a"
    folder.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(
        f"sqlite+aiosqlite:///{folder / 'tasks.db'}", pool_size=1, max_overflow=0
    )
    endpoint = A2AEndpoint(lab, evaluator, engine, origin, board=board)
    try:
        await endpoint.task_store.initialize()
        yield endpoint
    finally:
        await endpoint.aclose()


def a2a_routes(endpoint: A2AEndpoint) -> list[BaseRoute]:
    """`[Mount("/a2a", ...)]` for the lab app. The app-wide auth middleware must let `/a2a/`
    through (`open_prefixes=("/a2a/",)`): team tokens are checked here, per team."""
    return endpoint.routes()
