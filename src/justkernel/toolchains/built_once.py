"""A trusted file a toolchain builds once per version and keeps: the cpu template's harness
object, the ascendc-cpu harness main.

Built natively (it is our code, never a team's), into a scratch folder beside the target and
renamed into place, so a crash or a concurrent job never sees half a file; without a cache
folder it lives in a temporary one removed at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
from pathlib import Path


class BuiltOnce:
    """`<cache_dir>/<file_name>`, made by `make` on first use; safe for concurrent jobs."""

    file_name = "artefact"

    def __init__(self, cache_dir: Path | None) -> None:
        self._cache_dir = cache_dir
        self._lock = asyncio.Lock()
        self._path: Path | None = None

    async def path(self) -> Path:
        async with self._lock:
            if self._path is None or not self._path.is_file():
                self._path = await asyncio.to_thread(self._build)
            return self._path

    def make(self, scratch: Path, out: Path) -> None:
        """Write the file to `out`, using `scratch` (a fresh folder) for anything else;
        raise ToolchainError when it cannot be built."""
        raise NotImplementedError

    def _build(self) -> Path:
        folder = self._cache_dir
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix=f"jk-{self.file_name}-"))
            atexit.register(shutil.rmtree, folder, True)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / self.file_name
        if target.is_file():
            return target
        scratch = Path(tempfile.mkdtemp(prefix=f".{self.file_name}-", dir=folder))
        try:
            out = scratch / self.file_name
            self.make(scratch, out)
            os.chmod(out, 0o644)
            os.replace(out, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return target
