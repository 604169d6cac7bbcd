"""Fixtures for the A2A endpoint: a real lab runtime, the endpoint served by uvicorn on a free
loopback port, and outside clients built with the a2a-sdk client (bearer token interceptor)."""

from __future__ import annotations

import os

os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")  # before the SDK loads

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.client import AuthInterceptor, Client, ClientConfig, CredentialService, create_client
from a2a.helpers import new_data_part
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task
from starlette.applications import Starlette

from justkernel.a2a.endpoint import A2AEndpoint, a2a_routes, open_a2a
from justkernel.a2a.external import Joined, join_external, team_path
from justkernel.app import LabRuntime
from tests.support.a2a_agent import FIXTURE_KERNEL, fixture_files

# the real lab runtime fixtures (`runtime`, `lab_settings`) come from tests/conftest.py
__all__ = ["FIXTURE_KERNEL", "fixture_files"]  # re-exported for the A2A and security tests


@dataclass
class Served:
    base_url: str
    endpoint: A2AEndpoint

    def team_url(self, team_id: str) -> str:
        return self.base_url + team_path(team_id)


@asynccontextmanager
async def serve_a2a(runtime: LabRuntime) -> AsyncIterator[Served]:
    """The A2A routes in a Starlette app under uvicorn on 127.0.0.1 (real HTTP)."""
    async with open_a2a(runtime.lab, runtime.evaluator, board=runtime.board) as endpoint:
        app = Starlette(routes=a2a_routes(endpoint))
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        config = uvicorn.Config(
            app, log_level="warning", timeout_keep_alive=60, access_log=False, lifespan="off"
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        try:
            yield Served(f"http://127.0.0.1:{sock.getsockname()[1]}", endpoint)
        finally:
            server.should_exit = True
            await task
            sock.close()


@pytest.fixture
async def served(runtime: LabRuntime) -> AsyncIterator[Served]:
    async with serve_a2a(runtime) as opened:
        yield opened


async def new_run_with_teams(runtime: LabRuntime, *names: str) -> tuple[str, list[Joined]]:
    run = await runtime.lab.runs.create("a2a test")
    return run.id, [await join_external(runtime.lab, run.id, name) for name in names]


class StaticToken(CredentialService):
    """What an outside agent holds: one bearer token for its team."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def get_credentials(self, security_scheme_name: str, context: Any) -> str | None:
        return self._token


@asynccontextmanager
async def team_client(url: str, token: str | None) -> AsyncIterator[Client]:
    """An outside client: card from `url`, JSON-RPC with the team's bearer token."""
    async with httpx.AsyncClient(timeout=180) as http:
        interceptors = [AuthInterceptor(StaticToken(token))] if token else []
        client = await create_client(url, ClientConfig(httpx_client=http), interceptors)
        try:
            yield client
        finally:
            await client.close()


async def send(
    client: Client,
    skill: str | None,
    parts: list[Part] | None = None,
    *,
    task_id: str = "",
    message_id: str | None = None,
) -> Task:
    """Send one message (streamed), then read the task back with GetTask."""
    message = Message(
        role=Role.ROLE_USER,
        message_id=message_id or uuid.uuid4().hex,
        task_id=task_id,
        parts=parts or [new_data_part({})],
    )
    if skill is not None:
        message.metadata.update({"skill": skill})
    seen = task_id
    async for event in client.send_message(SendMessageRequest(message=message)):
        for field in ("task", "status_update", "artifact_update"):
            if event.HasField(field):
                item = getattr(event, field)
                seen = seen or (item.id if field == "task" else item.task_id)
    assert seen, "the stream named no task"
    return await client.get_task(GetTaskRequest(id=seen))
