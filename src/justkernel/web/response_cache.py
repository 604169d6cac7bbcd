"""Answers of the read endpoints, kept while their run has not changed.

Every dashboard answer is a function of the run's events up to `last_seq` (and of the query),
so a key that includes `last_seq` can never serve a stale answer. Most runs in a store are not
changing, and a hundred open dashboards ask the same questions: those answers cost a lookup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

MAX_BYTES = 32 * 1024 * 1024
MAX_ENTRY = 4 * 1024 * 1024


class ResponseCache:
    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._entries: OrderedDict[tuple[str, str, int], bytes] = OrderedDict()
        self._bytes = 0
        self._max = max_bytes

    def get(self, key: tuple[str, str, int]) -> bytes | None:
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
        return body

    def put(self, key: tuple[str, str, int], body: bytes) -> None:
        if len(body) > MAX_ENTRY or key in self._entries:
            return
        self._entries[key] = body
        self._bytes += len(body)
        while self._bytes > self._max:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped)

    async def answer(
        self, request: Request, last_seq: int, build: Callable[[], Awaitable[Response]]
    ) -> Response:
        """The cached JSON answer for this path and query at `last_seq`, or a fresh one."""
        key = (request.url.path, request.url.query, last_seq)
        body = self.get(key)
        if body is None:
            response = await build()
            if response.status_code != 200:
                return response
            body = bytes(response.body)
            self.put(key, body)
        return Response(body, media_type="application/json")
