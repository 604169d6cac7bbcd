"""A job as files: what a worker (SSH host, Dask worker, `justkernel worker run-job`) reads.

    <scratch>/packs/<pack_hash>/            an input pack, content-addressed
    <scratch>/packs/<pack_hash>.complete    marker written last: the pack is all there
    <scratch>/jobs/<name>/job.json          spec, slot, parallelism, worker name
    <scratch>/jobs/<name>/src/...           the candidate snapshot
    <scratch>/jobs/<name>/running           pid of the worker running it (removed when done)
    <scratch>/jobs/<name>/work/logs/<sha>   logs named by SHA-256 (as the local toolchain)
    <scratch>/jobs/<name>/receipt.json      the receipt, written atomically at the end
    <scratch>/jobs/<name>/error.json        or why the infrastructure could not judge it

The snapshot travels as a list of entries (regular files base64, symlinks as links) so a
refused tree (a symlink, say) is refused the same way on the worker as it would be locally.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from justkernel.core.jobs import JobSpec

JOB_FILE = "job.json"
RECEIPT_FILE = "receipt.json"
ERROR_FILE = "error.json"
RUNNING_FILE = "running"
COMPLETE_SUFFIX = ".complete"


@dataclass(frozen=True)
class JobFile:
    """The contents of job.json."""

    spec: JobSpec
    slot: int = 0
    parallelism: int = 1
    worker: str = "remote"

    def to_json(self) -> str:
        return json.dumps(
            {
                "spec": self.spec.model_dump(mode="json"),
                "slot": self.slot,
                "parallelism": self.parallelism,
                "worker": self.worker,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> JobFile:
        data = json.loads(text)
        return cls(
            spec=JobSpec.model_validate(data["spec"]),
            slot=int(data.get("slot", 0)),
            parallelism=int(data.get("parallelism", 1)),
            worker=str(data.get("worker", "remote")),
        )


def tree_entries(root: Path) -> list[dict[str, str]]:
    """Every regular file (base64) and symlink (target) below `root`, paths sorted."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if Path(dirpath, d).is_symlink()]):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                entries.append({"path": rel, "link": os.readlink(path)})
            elif stat.S_ISREG(mode):
                entries.append({"path": rel, "data": base64.b64encode(path.read_bytes()).decode()})
    return entries


def write_tree(entries: list[dict[str, str]], dest: Path) -> None:
    """Recreate the entries below `dest`, world-readable for the sandbox uid."""
    dest.mkdir(parents=True, exist_ok=True)
    os.chmod(dest, 0o755)
    for entry in entries:
        rel = Path(entry["path"])
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"bad path in job: {entry['path']!r}")
        target = dest / rel
        for parent in reversed(target.relative_to(dest).parents[:-1]):
            folder = dest / parent
            if folder.is_symlink():  # never write through a link the tree itself made
                raise ValueError(f"bad path in job: {entry['path']!r} is below a symlink")
            folder.mkdir(exist_ok=True)
            os.chmod(folder, 0o755)
        if "link" in entry:
            os.symlink(entry["link"], target)
        else:
            target.write_bytes(base64.b64decode(entry["data"]))
            os.chmod(target, 0o644)


def write_job(job_dir: Path, job: JobFile, entries: list[dict[str, str]]) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(job_dir, 0o755)
    write_tree(entries, job_dir / "src")
    write_atomic(job_dir / JOB_FILE, job.to_json())


def write_atomic(path: Path, text: str) -> None:
    """Temp file, fsync, rename: a reader never sees half of it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_logs(workdir: Path, shas: list[str]) -> dict[str, str]:
    """The named logs of a job (base64 by SHA-256), to ship back with the receipt."""
    return {sha: base64.b64encode((workdir / "logs" / sha).read_bytes()).decode() for sha in shas}


def store_logs(workdir: Path, logs: dict[str, Any]) -> None:
    """Write shipped logs where the evaluator expects them: workdir/logs/<sha256>."""
    folder = workdir / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    for sha, data in logs.items():
        raw = base64.b64decode(data) if isinstance(data, str) else bytes(data)
        (folder / Path(sha).name).write_bytes(raw)
