"""A real OpenAI-compatible chat completions server on 127.0.0.1, replaying a script.

No model API is reachable from the tests, so this stands in for one, speaking the real protocol
over real HTTP: the code under test uses an unmodified `ChatOpenAI` (or anything else that talks
OpenAI chat completions) pointed at `server.base_url`. No mocks.

Serving
    `POST /v1/chat/completions`, plain JSON or, with `"stream": true`, server-sent events: a role
    chunk, `reasoning_content` and text deltas, tool-call deltas with the JSON arguments split
    across chunks, a finish chunk, then (when `stream_options.include_usage`) a usage chunk with
    empty `choices`, then `data: [DONE]`. `GET /v1/models` lists `models`.

Scripting
    OpenAIServer([Reply(...), Fail(...), ...]) answers the n-th chat request with the n-th item;
    past the end it answers 500 "script exhausted" (with `x-should-retry: false`). A `Reply`
    holds assistant `text`, `tool_calls` (`ToolCall(name, arguments, id=None)`; ids default to
    `call_<request>_<j>`), optional `reasoning_content`, `usage` (`Usage(prompt_tokens,
    completion_tokens, reasoning_tokens, cached_tokens)`, or None for a provider that reports
    none), the `model` to echo (default: the requested one) and a `delay_s` before answering.
    A `Fail(status, message, code=..., retry_after_ms=..., should_retry=...)` answers with an
    OpenAI-style error body. Scripted mode: pass a callable `handler(body: dict) -> Reply | Fail`
    instead of a list, to serve whole tool-calling agent sessions (derive the next step from the
    messages in the body; it runs on the server's thread, under a lock, so keep it quick; if it
    raises, the request gets a 500 that is not retried and the exception lands in
    `server.handler_errors`).
    `server.add(...)` appends to a list script while it runs.

Checks, as the real APIs do (each answers 400 and does not consume the script)
    - the bearer key when `api_key` is set: a wrong key gets 401 `invalid_api_key`, and the
      message echoes the key that was sent, on purpose, so tests prove that error handling
      scrubs it;
    - `stream_options` without `stream`;
    - tool history (`check_tool_history=True`): every assistant `tool_calls` id answered by a
      following `tool` message, and no `tool` message without a preceding call;
    - DeepSeek thinking mode (`require_reasoning_passback=True`): every assistant message with
      `tool_calls` must carry `reasoning_content`, equal to what this server returned with those
      calls, with DeepSeek's own error messages.

Provider quirks (each off by default; `PROVIDER_QUIRKS[name]` switches on one provider's set,
`OpenAIServer(handler, **PROVIDER_QUIRKS["qwen"])`); each answers 400 and consumes no script:
    - DeepSeek (`string_content=True`): system, user and tool `content` must be a string, as its
      API reference types it; an array of parts is refused the way its JSON decoder refuses it;
    - Qwen thinking models (`stream_only=True`): a request without `"stream": true` is refused
      ("This model only support stream mode", Model Studio: most thinking models answer only
      streamed requests); `qwen_chunks=True` streams tool calls as DashScope does: the first
      delta of a call carries its id and name, the following ones `"id": ""` and
      `"name": ""` beside the argument piece, and every delta says `"content": null`;
    - OpenAI (`reject_max_tokens=True`): `max_tokens` is refused as GPT-5-class models refuse
      it ("Use 'max_completion_tokens' instead"); `stream_needs_verification=True`: a streamed
      request is refused as OpenAI refuses it for an unverified organisation.

Recording
    `server.requests` lists every request (`RecordedRequest`: index, method, path, headers with
    lower-case names and the Authorization value removed, `auth_ok` = whether the bearer key
    matched (None when no key is expected), the JSON body, the status answered);
    `server.chat_bodies` the bodies of chat requests that were answered 200.

Use
    with OpenAIServer([Reply(text="hi")], api_key="sk-test") as server:   # sync tests
        ChatOpenAI(model="m", base_url=server.base_url, api_key="sk-test", stream_usage=True)
    async with OpenAIServer(handler) as server: ...                        # async tests
    In JustKernel, build the model from a preset whose `base_url` is `server.base_url` with
    `justkernel.agents.providers.build_chat_model`. Start one server per async test:
    langchain-openai shares one async HTTP client per (base URL, timeout) across instances, and
    a client used on a closed event loop fails with "Event loop is closed"; a new server has a
    new port, hence a new client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

DEEPSEEK_DOCS = "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
STRING_CONTENT_ROLES = ("system", "user", "tool")
# the quirks of the providers the lab ships presets for (see the module docstring)
PROVIDER_QUIRKS: dict[str, dict[str, bool]] = {
    "deepseek": {"string_content": True, "require_reasoning_passback": True},
    "qwen": {"stream_only": True, "qwen_chunks": True},
    "openai": {"reject_max_tokens": True, "stream_needs_verification": True},
}


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Usage:
    prompt_tokens: int = 12
    completion_tokens: int = 5
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.reasoning_tokens is not None:
            body["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        if self.cached_tokens is not None:
            body["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return body


@dataclass
class Reply:
    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning_content: str | None = None
    usage: Usage | None = field(default_factory=Usage)
    model: str | None = None
    delay_s: float = 0.0
    chunk_chars: int = 4


@dataclass
class Fail:
    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    retry_after_ms: int | None = None
    should_retry: bool | None = None

    def response(self) -> JSONResponse:
        headers: dict[str, str] = {}
        if self.retry_after_ms is not None:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        if self.should_retry is not None:
            headers["x-should-retry"] = "true" if self.should_retry else "false"
        error = {"message": self.message, "type": self.type, "param": None, "code": self.code}
        return JSONResponse({"error": error}, status_code=self.status, headers=headers)


Handler = Callable[[dict[str, Any]], Reply | Fail]


@dataclass
class RecordedRequest:
    index: int
    method: str
    path: str
    headers: dict[str, str]
    auth_ok: bool | None
    body: dict[str, Any] | None
    status: int = 0


class _QuickServer(uvicorn.Server):
    """uvicorn polls its exit flag every 100 ms; tests start and stop many servers."""

    async def main_loop(self) -> None:
        ticks = 0
        while not await self.on_tick(ticks):
            await asyncio.sleep(0.01)
            ticks = (ticks + 1) % 100  # on_tick refreshes the Date header when ticks % 10 == 0


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class OpenAIServer:
    """Starlette + uvicorn on a free loopback port, in a background thread."""

    def __init__(
        self,
        script: Iterable[Reply | Fail] | Handler = (),
        *,
        api_key: str | None = None,
        models: Iterable[str] = ("scripted-model",),
        check_tool_history: bool = True,
        require_reasoning_passback: bool = False,
        string_content: bool = False,
        stream_only: bool = False,
        qwen_chunks: bool = False,
        reject_max_tokens: bool = False,
        stream_needs_verification: bool = False,
    ) -> None:
        self._handler: Handler | None = script if callable(script) else None
        self._script: list[Reply | Fail] = [] if callable(script) else list(script)
        self.api_key = api_key
        self.models = list(models)
        self.check_tool_history = check_tool_history
        self.require_reasoning_passback = require_reasoning_passback
        self.string_content = string_content
        self.stream_only = stream_only
        self.qwen_chunks = qwen_chunks
        self.reject_max_tokens = reject_max_tokens
        self.stream_needs_verification = stream_needs_verification
        self.requests: list[RecordedRequest] = []
        self.handler_errors: list[Exception] = []
        self._answered = 0  # chat requests that reached the script
        self._reasoning_by_call: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # lifecycle ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=300,
            timeout_graceful_shutdown=2,
        )
        self._server = _QuickServer(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scripted OpenAI server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> OpenAIServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # script and records ---------------------------------------------------------------------

    def add(self, *items: Reply | Fail) -> None:
        with self._lock:
            self._script.extend(items)

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [
                r.body
                for r in self.requests
                if r.path.endswith("/chat/completions") and r.status == 200 and r.body
            ]

    def _record(self, request: Request, body: dict[str, Any] | None) -> RecordedRequest:
        headers = {k.lower(): v for k, v in request.headers.items() if k.lower() != "authorization"}
        auth_ok = None
        if self.api_key is not None:
            auth_ok = request.headers.get("authorization") == f"Bearer {self.api_key}"
        with self._lock:
            record = RecordedRequest(
                len(self.requests), request.method, request.url.path, headers, auth_ok, body
            )
            self.requests.append(record)
        return record

    def _next(self, body: dict[str, Any]) -> tuple[int, Reply | Fail]:
        with self._lock:
            index = self._answered
            self._answered += 1
            if self._handler is not None:
                try:
                    return index, self._handler(body)
                except Exception as exc:  # a broken test handler, not a provider failure
                    self.handler_errors.append(exc)
                    return index, Fail(
                        500, f"handler raised {exc!r}", "server_error", should_retry=False
                    )
            if index < len(self._script):
                return index, self._script[index]
        return index, Fail(
            500, f"script exhausted after {index} replies", "server_error", should_retry=False
        )

    # checks ---------------------------------------------------------------------------------

    def _auth_failure(self, request: Request) -> Fail | None:
        if self.api_key is None:
            return None
        header = request.headers.get("authorization", "")
        if header == f"Bearer {self.api_key}":
            return None
        sent = header.removeprefix("Bearer ")
        return Fail(401, f"Incorrect API key provided: {sent}.", code="invalid_api_key")

    def _history_failure(self, body: dict[str, Any]) -> Fail | None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not body.get("model"):
            return Fail(400, "'model' and a non-empty 'messages' array are required")
        if body.get("stream_options") is not None and not body.get("stream"):
            return Fail(
                400, "The 'stream_options' parameter is only allowed when 'stream' is enabled."
            )
        failure = self._quirk_failure(body, messages)
        if failure is not None:
            return failure
        if self.require_reasoning_passback:
            failure = self._reasoning_failure(messages)
            if failure is not None:
                return failure
        return self._tool_history_failure(messages) if self.check_tool_history else None

    def _quirk_failure(self, body: dict[str, Any], messages: list[dict[str, Any]]) -> Fail | None:
        if self.string_content:
            for i, message in enumerate(messages):
                content = message.get("content")
                if message.get("role") in STRING_CONTENT_ROLES and not isinstance(content, str):
                    return Fail(
                        400,
                        "Failed to deserialize the JSON body into the target type: "
                        f"messages[{i}]: invalid type: {type(content).__name__}, "
                        "expected a string",
                        code="invalid_request_error",
                    )
        if self.stream_only and not body.get("stream"):
            return Fail(
                400,
                "This model only support stream mode, please enable the stream parameter to "
                "access the model.",
                code="invalid_parameter_error",
            )
        if self.reject_max_tokens and "max_tokens" in body:
            return Fail(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                code="unsupported_parameter",
            )
        if self.stream_needs_verification and body.get("stream"):
            return Fail(
                400,
                "Your organization must be verified to stream this model. Please go to: "
                "https://platform.openai.com/settings/organization/general and click on "
                "Verify Organization.",
                code="unsupported_value",
            )
        return None

    def _reasoning_failure(self, messages: list[dict[str, Any]]) -> Fail | None:
        for i, message in enumerate(messages):
            if message.get("role") != "assistant" or not message.get("tool_calls"):
                continue
            if "reasoning_content" not in message:
                return Fail(
                    400,
                    "Missing `reasoning_content` field in the assistant message at message "
                    f"index {i}. For more information, please refer to {DEEPSEEK_DOCS}",
                )
            with self._lock:
                returned = {
                    self._reasoning_by_call.get(str(call.get("id")))
                    for call in message["tool_calls"]
                } - {None}
            if returned and message["reasoning_content"] not in returned:
                return Fail(
                    400,
                    "The `reasoning_content` in the thinking mode must be passed back to the API.",
                )
        return None

    @staticmethod
    def _tool_history_failure(messages: list[dict[str, Any]]) -> Fail | None:
        pending: set[str] = set()
        for message in messages:
            role = message.get("role")
            if role == "tool":
                call_id = message.get("tool_call_id")
                if call_id not in pending:
                    return Fail(
                        400,
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                    )
                pending.discard(call_id)
                continue
            if pending:
                break
            if role == "assistant":
                pending = {str(c.get("id")) for c in message.get("tool_calls") or []}
        if pending:
            return Fail(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(sorted(pending))}",
            )
        return None

    # responses ------------------------------------------------------------------------------

    def _remember_reasoning(self, reply: Reply, calls: list[dict[str, Any]]) -> None:
        if reply.reasoning_content is not None:
            with self._lock:
                for call in calls:
                    self._reasoning_by_call[call["id"]] = reply.reasoning_content

    @staticmethod
    def _calls(reply: Reply, index: int) -> list[dict[str, Any]]:
        return [
            {
                "id": call.id or f"call_{index}_{j}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for j, call in enumerate(reply.tool_calls)
        ]

    def _completion(self, reply: Reply, index: int, model: str) -> dict[str, Any]:
        calls = self._calls(reply, index)
        self._remember_reasoning(reply, calls)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if calls:
            message["tool_calls"] = calls
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
        body: dict[str, Any] = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
        }
        if reply.usage is not None:
            body["usage"] = reply.usage.to_json()
        return body

    def _chunks(
        self, reply: Reply, index: int, model: str, include_usage: bool
    ) -> list[dict[str, Any]]:
        calls = self._calls(reply, index)
        self._remember_reasoning(reply, calls)
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        for piece in _pieces(reply.reasoning_content or "", reply.chunk_chars):
            if piece:
                deltas.append({"reasoning_content": piece})
        for piece in _pieces(reply.text or "", reply.chunk_chars):
            if piece:
                deltas.append({"content": piece})
        for j, call in enumerate(calls):
            function = {"name": call["function"]["name"], "arguments": ""}
            deltas.append(
                {
                    "tool_calls": [
                        {"index": j, "id": call["id"], "type": "function", "function": function}
                    ]
                }
            )
            for piece in _pieces(call["function"]["arguments"], reply.chunk_chars):
                if self.qwen_chunks:
                    part = {"name": "", "arguments": piece}
                    follow = {"index": j, "id": "", "type": "function", "function": part}
                else:
                    follow = {"index": j, "function": {"arguments": piece}}
                deltas.append({"tool_calls": [follow]})
        if self.qwen_chunks:
            deltas = [{"content": None, **d} for d in deltas]
        base = {"id": f"chatcmpl-{index}", "object": "chat.completion.chunk", "model": model}
        base["created"] = int(time.time())
        extra = {"usage": None} if include_usage else {}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}], **extra}
            for d in deltas
        ]
        finish = "tool_calls" if calls else "stop"
        chunks.append(
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], **extra}
        )
        if include_usage and reply.usage is not None:
            chunks.append({**base, "choices": [], "usage": reply.usage.to_json()})
        return chunks

    async def _chat(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except json.JSONDecodeError:
            body = None
        record = self._record(request, body if isinstance(body, dict) else None)
        answer = await self._answer(request, record)
        record.status = answer.status_code
        return answer

    async def _answer(self, request: Request, record: RecordedRequest) -> Response:
        failure = self._auth_failure(request)
        if failure is not None:
            return failure.response()
        if record.body is None:
            return Fail(400, "We could not parse the JSON body of your request.").response()
        body = record.body
        failure = self._history_failure(body)
        if failure is not None:
            return failure.response()
        index, step = self._next(body)
        if isinstance(step, Fail):
            return step.response()
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        model = step.model or str(body["model"])
        if not body.get("stream"):
            return JSONResponse(self._completion(step, index, model))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = self._chunks(step, index, model, include_usage)

        async def events() -> AsyncIterator[str]:
            for chunk in chunks:
                yield f"data: {json.dumps(chunk)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def _models(self, request: Request) -> Response:
        record = self._record(request, None)
        failure = self._auth_failure(request)
        answer = (
            failure.response()
            if failure is not None
            else JSONResponse(
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "justkernel-tests"}
                        for m in self.models
                    ],
                }
            )
        )
        record.status = answer.status_code
        return answer

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )
