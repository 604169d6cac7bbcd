"""Concurrency limits for model calls: a global cap and one per provider type, and a pause
switch per connection (a model preset: its own base URL and key) for authentication or
balance errors (resuming is one action).

Pauses are keyed by the connection, not the provider type: two presets of type
`openai_compatible` on two servers with two keys fail and are fixed apart, so one bad key
must not stop the other's teams. The concurrency caps (`per_provider`) stay per provider type,
as documented."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


class ProviderPaused(RuntimeError):
    """Dispatch to `connection` is paused. `provider` is the same name (older callers read it)."""

    def __init__(self, connection: str, reason: str) -> None:
        super().__init__(f"connection {connection} is paused: {reason}")
        self.connection = connection
        self.provider = connection
        self.reason = reason


@dataclass
class ModelCallLimiter:
    total: int = 4
    per_provider: dict[str, int] = field(default_factory=dict)
    paused: dict[str, str] = field(default_factory=dict)  # connection -> reason
    in_flight: int = 0
    peak: int = 0
    _global: asyncio.Semaphore | None = None
    _providers: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    def _semaphores(self, provider: str) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        if self._global is None:
            self._global = asyncio.Semaphore(self.total)
        if provider not in self._providers:
            self._providers[provider] = asyncio.Semaphore(
                self.per_provider.get(provider, self.total)
            )
        return self._global, self._providers[provider]

    @asynccontextmanager
    async def slot(self, provider: str, connection: str | None = None) -> AsyncIterator[None]:
        """A call slot under `provider`'s cap, refused while `connection` (default: the
        provider's name) is paused."""
        paused_key = connection or provider
        if paused_key in self.paused:
            raise ProviderPaused(paused_key, self.paused[paused_key])
        overall, mine = self._semaphores(provider)
        async with mine, overall:
            if paused_key in self.paused:
                raise ProviderPaused(paused_key, self.paused[paused_key])
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1

    def pause(self, connection: str, reason: str) -> None:
        self.paused[connection] = reason

    def resume(self, connection: str) -> bool:
        return self.paused.pop(connection, None) is not None
