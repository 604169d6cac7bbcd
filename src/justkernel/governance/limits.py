"""Concurrency limits for model calls: a global cap and one per provider, and a per-provider
pause switch for authentication or balance errors (resuming is one action)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


class ProviderPaused(RuntimeError):
    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"provider {provider} is paused: {reason}")
        self.provider = provider
        self.reason = reason


@dataclass
class ModelCallLimiter:
    total: int = 4
    per_provider: dict[str, int] = field(default_factory=dict)
    paused: dict[str, str] = field(default_factory=dict)
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
    async def slot(self, provider: str) -> AsyncIterator[None]:
        if provider in self.paused:
            raise ProviderPaused(provider, self.paused[provider])
        overall, mine = self._semaphores(provider)
        async with mine, overall:
            if provider in self.paused:
                raise ProviderPaused(provider, self.paused[provider])
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1

    def pause(self, provider: str, reason: str) -> None:
        self.paused[provider] = reason

    def resume(self, provider: str) -> bool:
        return self.paused.pop(provider, None) is not None
