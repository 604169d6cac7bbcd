"""The demo: a recorded session bundle loaded as the lab's one demo run, played by the page.

The bundle (`resources/demo/session.jkbundle`, recorded from a real offline run by
`tools/record_demo.py`) is validated by the ordinary importer's checks, its blobs go into the
lab's blob store, and its events are stored at once, verbatim (their recorded times kept), in
one run of mode `demo` (labelled simulated everywhere). The page plays that run when it is
opened (the replay player, at the run's `speed`, looping), so a newcomer who opens the demo
late sees it from the start, and another Demo click opens the same run instead of a second one.
Nothing here reads a credential, calls a model or opens a network connection.
"""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path

from justkernel.events import Event
from justkernel.events.run_archive import blob_member
from justkernel.events.run_archive_check import check_bundle
from justkernel.lab import Lab
from justkernel.paths import resources_dir
from justkernel.store import Run


def demo_bundle_path() -> Path:
    return resources_dir() / "demo" / "session.jkbundle"


class DemoPlayer:
    def __init__(self, lab: Lab, bundle: Path | None = None, *, speed: float = 6.0) -> None:
        self.lab = lab
        self.bundle = bundle or demo_bundle_path()
        self.speed = max(0.1, speed)
        self._events: list[Event] = []
        self._meta: dict[str, object] = {}
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
        """The lab's demo run, with every recorded event. There is one per lab and recording:
        another click, or a server restarted while an older one was filling it, gets the same
        run (the events it lacks are added; the event log is append-only)."""
        await self.load()
        async with self._starting:
            if self.run is None:
                self.run = await self._existing() or await self.lab.runs.create(
                    f"Demo — {self._meta['recorded_name']}",
                    mode="demo",
                    meta={**self._meta, "simulated": True, "demo": True, "speed": self.speed},
                )
            self.run = await self.lab.runs.get(self.run.id)
            missing = [e for e in self._events if e.seq > self.run.last_seq]
            if missing:
                await self.lab.events.insert_verbatim(self.run.id, missing)
                self.run = await self.lab.runs.get(self.run.id)
            return self.run

    async def _existing(self) -> Run | None:
        """A demo run of this recording that an earlier server of this lab started."""
        for run in await self.lab.runs.list():
            if run.mode == "demo" and run.meta.get("bundle_sha256") == self._meta["bundle_sha256"]:
                return run
        return None

    @property
    def playing(self) -> bool:
        """The page plays the demo; the server has nothing under way."""
        return False

    async def stop(self) -> None:
        """Nothing to stop: kept for the app's shutdown, which stops what it started."""
