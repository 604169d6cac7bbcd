"""Demo playback: a recorded session bundle replayed as a live-looking run, with time scaling.

The bundle (`resources/demo/session.jkbundle`, recorded from a real offline run by
`tools/record_demo.py`) is validated by the ordinary importer's checks, its blobs go into the
lab's blob store, and its events are appended to a new run of mode `demo` (labelled simulated
everywhere) at the recorded pace divided by `speed`, long pauses capped at `max_gap` seconds.
Nothing here reads a credential, calls a model or opens a network connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import zipfile
from datetime import datetime
from pathlib import Path

from justkernel.events import Event, NewEvent
from justkernel.events.run_archive import blob_member
from justkernel.events.run_archive_check import check_bundle
from justkernel.lab import Lab
from justkernel.paths import resources_dir
from justkernel.store import Run

BATCH_WINDOW = 0.02  # events closer than this (after scaling) are appended together


def demo_bundle_path() -> Path:
    return resources_dir() / "demo" / "session.jkbundle"


def _seconds(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


class DemoPlayer:
    def __init__(
        self, lab: Lab, bundle: Path | None = None, *, speed: float = 6.0, max_gap: float = 2.0
    ) -> None:
        self.lab = lab
        self.bundle = bundle or demo_bundle_path()
        self.speed = max(0.1, speed)
        self.max_gap = max_gap
        self._events: list[Event] = []
        self._meta: dict[str, object] = {}
        self._task: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self.run: Run | None = None

    async def load(self) -> None:
        """Validate the bundle and store its blobs (once)."""
        if self._events:
            return
        limit = self.lab.settings.export_max_bytes
        bundle = await asyncio.to_thread(check_bundle, self.bundle, limit)
        await asyncio.to_thread(self._store_blobs, bundle.blobs)
        self._events = bundle.events
        self._meta = {
            "recorded_name": bundle.manifest.run.name,
            "source_run_id": bundle.manifest.run.source_run_id,
            "bundle_sha256": bundle.sha256,
            "event_count": len(bundle.events),
        }

    def _store_blobs(self, shas: list[str]) -> None:
        with zipfile.ZipFile(self.bundle) as zf:
            for sha in shas:
                if not self.lab.blobs.has(sha):
                    self.lab.blobs.put(zf.read(blob_member(sha)))

    async def start(self) -> Run:
        """The lab's demo run, playing. There is one per lab and recording: another click, or
        a server restarted mid-playback, gets the same run, resumed where it stopped (the
        event log is append-only, so a replay from the start would need a second copy)."""
        await self.load()
        async with self._starting:
            if self.run is None:
                self.run = await self._existing() or await self.lab.runs.create(
                    f"Demo — {self._meta['recorded_name']}",
                    mode="demo",
                    meta={**self._meta, "simulated": True, "demo": True, "speed": self.speed},
                )
            self.run = await self.lab.runs.get(self.run.id)
            if not self.playing and self.run.last_seq < len(self._events):
                self._task = asyncio.create_task(self._play(self.run.id, self.run.last_seq))
            return self.run

    async def _existing(self) -> Run | None:
        """A demo run of this recording that an earlier server of this lab started."""
        for run in await self.lab.runs.list():
            if run.mode == "demo" and run.meta.get("bundle_sha256") == self._meta["bundle_sha256"]:
                return run
        return None

    def _delays(self) -> list[float]:
        delays, previous = [], None
        for event in self._events:
            now = _seconds(event.ts)
            gap = 0.0 if previous is None else max(0.0, now - previous) / self.speed
            delays.append(min(gap, self.max_gap))
            previous = now
        return delays

    async def _play(self, run_id: str, played: int = 0) -> None:
        """Append the recording's events from index `played` on, at the recorded pace."""
        pending: list[NewEvent] = []
        steps = list(zip(self._events, self._delays(), strict=True))[played:]
        for event, delay in steps:
            if delay >= BATCH_WINDOW and pending:
                await self.lab.events.append_many(run_id, pending)
                pending = []
            if delay >= BATCH_WINDOW:
                await asyncio.sleep(delay)
            # as recorded: the payload text and its schema version, not re-typed
            pending.append(
                NewEvent(event.kind, event.payload, event.team, None, event.schema_version)
            )
        if pending:
            await self.lab.events.append_many(run_id, pending)

    @property
    def playing(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
