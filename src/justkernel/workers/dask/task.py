"""The function a Dask worker runs for one lab job (imported by the workers, so it lives in
the package): job files into the worker's scratch, `run_job_dir`, receipt and logs back.

Input packs come either as a path the worker can read (`shared_packs`: a shared filesystem,
or loopback) or as tar bytes scattered once per pack by the lab and unpacked into the worker's
scratch under their hash, with the same marker-last rule as the SSH hosts.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import tarfile
import tempfile
import uuid
from pathlib import Path
from typing import Any

from justkernel.workers.job_files import COMPLETE_SUFFIX, JobFile, read_logs, write_job
from justkernel.workers.worker_entry import Toolchains, open_dir, remove_job, run_job_dir

# Per worker process: building a toolchain costs a few tool calls; jobs reuse it.
_toolchains: dict[str, Toolchains] = {}


def pack_tar(root: Path) -> bytes:
    """A pack folder as tar bytes (what the lab scatters to the cluster once per pack)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(root, arcname=".")
    return buffer.getvalue()


def _unpack(packs_dir: Path, digest: str, data: bytes) -> None:
    if (packs_dir / f"{digest}{COMPLETE_SUFFIX}").is_file():
        return
    staging = Path(tempfile.mkdtemp(prefix=f".unpack-{digest[:16]}-", dir=packs_dir))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(staging, filter="data")
        try:
            os.rename(staging, packs_dir / digest)
        except OSError:  # another job on this worker unpacked it first
            if not (packs_dir / digest).is_dir():
                raise
        (packs_dir / f"{digest}{COMPLETE_SUFFIX}").write_text("complete\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def run_dask_job(
    name: str, job_json: str, files: list[dict[str, str]], packs: dict[str, Any], scratch: str
) -> dict[str, Any]:
    """Run one job on this Dask worker; returns the receipt (JSON) and its logs (base64)."""
    from distributed import get_worker

    worker = f"dask:{get_worker().address}"
    root = open_dir(Path(scratch))
    packs_dir = open_dir(root / "packs")
    shared: dict[str, Path] = {}
    for digest, source in packs.items():
        if isinstance(source, str):
            shared[digest] = Path(source)
        else:
            _unpack(packs_dir, digest, source)
    toolchains = _toolchains.setdefault(scratch, Toolchains(open_dir(root / "toolchains")))
    # each attempt its own folder: a retry must not meet the leftovers of a killed worker
    job_dir = open_dir(root / "jobs") / f"{name}-{uuid.uuid4().hex[:8]}"
    write_job(job_dir, JobFile.from_json(job_json), files)
    try:
        receipt = asyncio.run(
            run_job_dir(
                job_dir,
                packs_dir=packs_dir,
                toolchains=toolchains,
                shared_packs=shared,
                worker=worker,
            )
        )
        logs = read_logs(job_dir / "work", [ref.sha256 for ref in receipt.all_logs()])
    finally:
        remove_job(job_dir)
    return {"receipt": receipt.model_dump(mode="json"), "logs": logs, "worker": worker}


def worker_offer(toolchain_id: str, scratch: str) -> tuple[str, str]:
    """(toolchain id, version) this worker runs: the lab sends it only matching jobs."""
    root = open_dir(Path(scratch))
    toolchains = _toolchains.setdefault(scratch, Toolchains(open_dir(root / "toolchains")))
    tc = toolchains.get(toolchain_id)
    return tc.id, tc.version
