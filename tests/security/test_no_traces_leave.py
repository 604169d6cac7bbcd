"""Nothing about a team leaves the machine through LangSmith tracing: a user whose shell exports
`LANGSMITH_TRACING=true` (with a key and an endpoint) still sends no trace of a team's prompts,
sources or tool results anywhere. The endpoint here is a real HTTP server on 127.0.0.1 that
records every request it gets."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from langchain_core.tracers.langchain import wait_for_all_tracers

from justkernel.app import open_runtime
from justkernel.settings.config import Settings
from tests.support.openai_server import Reply, ToolCall
from tests.support.scripted_run import scripted_run

KEY = "sk-scripted-tracing-key-777777"


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []  # each test server's own subclass sets its list

    def _answer(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PATCH = do_PUT = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def trace_endpoint() -> Iterator[tuple[str, list[str]]]:
    seen: ClassVar[list[str]] = []  # each test server's own subclass sets its list
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


async def test_a_team_turn_sends_no_trace_even_with_tracing_switched_on(
    lab_settings: Settings,
    trace_endpoint: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoint, seen = trace_endpoint
    for prefix in ("LANGSMITH", "LANGCHAIN"):
        monkeypatch.setenv(f"{prefix}_TRACING", "true")
        monkeypatch.setenv(f"{prefix}_TRACING_V2", "true")
        monkeypatch.setenv(f"{prefix}_ENDPOINT", endpoint)
        monkeypatch.setenv(f"{prefix}_API_KEY", "lsv2-test-tracing-key-123456")
    script = [
        Reply(tool_calls=[ToolCall("read_file", {"file_path": "/spec.md"})]),
        Reply(text="Read it. [done]"),
    ]
    async with (
        open_runtime(lab_settings, slots=1) as runtime,
        scripted_run(runtime, "traced?", script, key=KEY) as arranged,
    ):
        await arranged.scheduler.run(seconds=60)
        assert len(arranged.server.chat_bodies) == 2  # the turn did run, tool call and all
        responses = [
            e
            async for e in runtime.lab.events.iter_all(arranged.run.id)
            if e.kind == "model.response"
        ]
        assert len(responses) == 2
    wait_for_all_tracers()  # whatever a tracer queued is sent now
    assert seen == []
