"""The worker side of a remote job: the same pipeline as the local executor, from job files.

`run_job_dir` is what `justkernel worker run-job JOB_DIR` runs, what each job of a worker
session (`worker_session`) runs and what a Dask task runs. It checks that the packs on this host
are exactly the ones the spec names, runs the toolchain, stamps the receipt with the lab's name
for this place (`executor.worker`, e.g. `ssh:npu1`; `executor.host` is this machine's own
hostname) and writes `receipt.json` before anyone is told, so a receipt outlives a lost
connection and can be collected later.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from justkernel.core.receipts import Receipt
from justkernel.operators import InputPack, load_input_pack, verify_input_pack
from justkernel.toolchains.protocol import Progress, Toolchain, ToolchainError
from justkernel.toolchains.registry import Toolchains, open_dir
from justkernel.workers.job_files import (
    COMPLETE_SUFFIX,
    ERROR_FILE,
    JOB_FILE,
    RECEIPT_FILE,
    RUNNING_FILE,
    JobFile,
    write_atomic,
)

VERIFIED_SUFFIX = ".verified"


def _open_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)


def pack_ready(packs_dir: Path, pack_hash: str) -> bool:
    return (packs_dir / f"{pack_hash}{COMPLETE_SUFFIX}").is_file()


def load_packs(
    packs_dir: Path, wanted: dict[str, str], shared: dict[str, Path] | None = None
) -> dict[str, InputPack]:
    """The packs the spec names (role → hash): from this host's pack folder, each verified
    once, or from `shared` folders (hash → path) that the lab itself reads."""
    found = {}
    for role, digest in wanted.items():
        if shared and digest in shared:
            pack = load_input_pack(shared[digest])
            if pack.pack_hash != digest:
                raise ToolchainError(f"pack {shared[digest]} is not {digest[:12]}")
            found[role] = pack
            continue
        root = packs_dir / digest
        if not (root / "manifest.json").is_file():
            raise ToolchainError(f"input pack {digest[:12]} is not on this host ({packs_dir})")
        pack = load_input_pack(root)
        marker = packs_dir / f"{digest}{VERIFIED_SUFFIX}"
        if not marker.is_file():  # once per pack and host; also catches a partial copy
            verify_input_pack(pack)
            if pack.pack_hash != digest:
                raise ToolchainError(f"pack {root} is {pack.pack_hash[:12]}, not {digest[:12]}")
            if pack_ready(packs_dir, digest):  # uploaded by the lab: ours to open and mark
                _open_tree(root)
                marker.write_text("ok\n")
        found[role] = pack
    return found


async def run_job_dir(
    job_dir: Path,
    *,
    packs_dir: Path | None = None,
    toolchains: Toolchains | None = None,
    progress: Progress | None = None,
    shared_packs: dict[str, Path] | None = None,
    worker: str | None = None,
) -> Receipt:
    """Run the job in `job_dir`; write and return its receipt. Infrastructure failures are
    written to error.json and raised (ToolchainError, SandboxError, PackError...)."""
    job_dir = Path(job_dir)
    scratch = job_dir.parent.parent
    packs_dir = packs_dir or scratch / "packs"
    toolchains = toolchains or Toolchains(scratch / "toolchains")
    job = JobFile.from_json((job_dir / JOB_FILE).read_text())
    (job_dir / RUNNING_FILE).write_text(f"{os.getpid()}\n")
    try:
        open_dir(job_dir)
        _open_tree(job_dir / "src")
        toolchain = toolchains.get(job.spec.toolchain_id, job.spec.operator)
        packs = load_packs(packs_dir, dict(job.spec.input_packs), shared_packs)
        receipt = await toolchain.run(
            job.spec,
            job_dir / "src",
            packs,
            job_dir / "work",
            job.slot,
            parallelism=job.parallelism,
            progress=progress,
        )
        name = worker or job.worker
        receipt.executor = receipt.executor.model_copy(update={"worker": name})
        write_atomic(job_dir / RECEIPT_FILE, receipt.model_dump_json())
        return receipt
    except Exception as exc:
        write_atomic(job_dir / ERROR_FILE, json.dumps(error_message(exc)))
        raise
    finally:
        with contextlib.suppress(OSError):
            (job_dir / RUNNING_FILE).unlink()


def error_message(exc: BaseException) -> dict[str, str]:
    return {"kind": type(exc).__name__, "message": str(exc)}


def job_state(job_dir: Path) -> dict[str, Any]:
    """What a later session finds of a job: done (receipt), failed, running or missing."""
    receipt = job_dir / RECEIPT_FILE
    if receipt.is_file():
        return {"state": "done", "receipt": json.loads(receipt.read_text())}
    if (job_dir / ERROR_FILE).is_file():
        return {"state": "failed", "error": json.loads((job_dir / ERROR_FILE).read_text())}
    running = job_dir / RUNNING_FILE
    if running.is_file():
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(running.read_text().strip()), 0)
            return {"state": "running"}
    return {"state": "missing"}


def remove_job(job_dir: Path) -> None:
    shutil.rmtree(job_dir, ignore_errors=True)


def worker_info(toolchains: Toolchains, toolchain_id: str, scratch: Path) -> dict[str, Any]:
    """Who this worker is: the host, the toolchain it offers at which version, free disk."""
    info: dict[str, Any] = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": sys.version.split()[0],
        "code": str(Path(__file__).resolve().parent.parent),  # the package or a bundle
        "scratch": str(scratch),
    }
    try:
        tc = toolchains.get(toolchain_id)
        info["toolchain"] = {"id": tc.id, "version": tc.version, "facts": _facts(tc)}
        missing = getattr(tc, "missing", lambda: ())()  # CANN says what it lacks here
        if missing:
            info["toolchain_error"] = f"{toolchain_id} lacks: {'; '.join(missing)}"
    except Exception as exc:
        info["toolchain_error"] = f"{toolchain_id}: {exc}"
    try:
        usage = shutil.disk_usage(scratch)
        info["free_bytes"] = usage.free
    except OSError as exc:
        info["disk_error"] = str(exc)
    return info


def _facts(tc: Toolchain) -> dict[str, Any]:
    facts = tc.version_info()
    keep = ("gcc", "valgrind", "libc", "cpu_model", "sandbox", "pipeline")
    return {k: facts[k] for k in keep if k in facts}
