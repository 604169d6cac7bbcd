"""In-process fan-out of committed events to live subscribers.

The bus is only a fast path: it never blocks a writer. A subscriber whose queue is full is
flagged as lagging and catches up from the store; see `EventLog.subscribe`.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from justkernel.events.model import Event

DEFAULT_QUEUE_SIZE = 2048


class Subscription:
    """One subscriber's queue and its lagging flag."""

    def __init__(self, run_id: str, maxsize: int) -> None:
        self.run_id = run_id
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=maxsize)
        self.lagging = False

    def offer(self, event: Event) -> None:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.lagging = True

    def drain(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()


class EventBus:
    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._subscriptions: dict[str, set[Subscription]] = defaultdict(set)

    def register(self, run_id: str) -> Subscription:
        sub = Subscription(run_id, self._queue_size)
        self._subscriptions[run_id].add(sub)
        return sub

    def unregister(self, sub: Subscription) -> None:
        subs = self._subscriptions.get(sub.run_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subscriptions[sub.run_id]

    def publish(self, events: list[Event]) -> None:
        for event in events:
            for sub in self._subscriptions.get(event.run_id, ()):
                sub.offer(event)
