"""`justkernel worker serve`: many jobs over one SSH channel, as JSON lines.

Why a session and not one `run-job` process per job: starting Python and importing the
pipeline costs about a second on a small host, which is a fifth of a fast full job. The session
pays it once per connection; each job still runs exactly as `run-job` would (`run_job_dir`).

    lab → worker   {"op": "run", "job": NAME, "spec": {...}, "slot": 0, "parallelism": 1,
                    "worker": "ssh:npu1", "files": [...]}
                   {"op": "ping", "seq": N}      {"op": "cancel", "job": NAME}
                   {"op": "collect", "job": NAME}  {"op": "forget", "job": NAME}
    worker → lab   {"op": "hello", ...worker_info...}   {"op": "pong", "seq": N}
                   {"op": "log", "job": NAME, "line": "compile"}
                   {"op": "result", "job": NAME, "receipt": {...}, "logs": {sha: base64}}
                   {"op": "error", "job": NAME, "kind": "ToolchainError", "message": "..."}
                   {"op": "collected", "job": NAME, "state": "done|failed|running|missing", ...}

When stdin closes (the lab or the connection went away) the session stops reading but lets
its running jobs finish: their receipts stay in their job folders for a later `collect`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import Receipt
from justkernel.workers.job_files import JobFile, read_logs, write_job
from justkernel.workers.worker_entry import (
    Toolchains,
    error_message,
    job_state,
    open_dir,
    remove_job,
    run_job_dir,
    worker_info,
)

log = logging.getLogger("justkernel.worker")
LINE_LIMIT = 256 << 20  # a run message carries the candidate's files


class WorkerSession:
    def __init__(self, scratch: Path, toolchain_id: str, writer: asyncio.StreamWriter) -> None:
        self.scratch = open_dir(Path(scratch))
        self.jobs_dir = open_dir(self.scratch / "jobs")
        self.packs_dir = open_dir(self.scratch / "packs")
        self.toolchain_id = toolchain_id
        self.toolchains = Toolchains(open_dir(self.scratch / "toolchains"))
        self._writer = writer
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.detached = False  # the lab is gone; keep working, stop talking

    def write(self, message: dict[str, Any]) -> None:
        """Buffer one message (no waiting: log lines are sent from progress callbacks)."""
        if self.detached:
            return
        try:
            self._writer.write(json.dumps(message).encode() + b"\n")
        except (ConnectionError, OSError, RuntimeError):
            self.detached = True

    async def send(self, message: dict[str, Any]) -> None:
        self.write(message)
        if self.detached:
            return
        try:
            await self._writer.drain()
        except (ConnectionError, OSError, RuntimeError):
            self.detached = True

    def _job_dir(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"bad job name {name!r}")
        return self.jobs_dir / name

    async def serve(self, reader: asyncio.StreamReader) -> None:
        info = await asyncio.to_thread(
            worker_info, self.toolchains, self.toolchain_id, self.scratch
        )
        await self.send({"op": "hello", **info})
        while True:
            try:
                line = await reader.readline()
            except (ConnectionError, ValueError):
                break
            if not line:
                break
            msg: Any = None
            try:
                msg = json.loads(line)
                await self.handle(msg)
            except Exception as exc:  # a bad message must not end the session
                log.exception("bad message")
                job = msg.get("job") if isinstance(msg, dict) else None
                await self.send({"op": "error", "job": job, **error_message(exc)})
        self.detached = True
        if self._tasks:  # finish what was started; receipts stay on disk
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def handle(self, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == "ping":
            await self.send({"op": "pong", "seq": msg.get("seq"), "running": len(self._tasks)})
        elif op == "run":
            name = msg["job"]
            job_dir = self._job_dir(name)
            job = JobFile(
                spec=JobSpec.model_validate(msg["spec"]),
                slot=int(msg.get("slot", 0)),
                parallelism=int(msg.get("parallelism", 1)),
                worker=str(msg.get("worker", "remote")),
            )
            await asyncio.to_thread(write_job, job_dir, job, msg["files"])
            self._tasks[name] = asyncio.create_task(self._run(name, job_dir))
        elif op == "cancel":
            task = self._tasks.get(msg["job"])
            if task is not None:
                task.cancel()
        elif op == "collect":
            name = msg["job"]
            state = await asyncio.to_thread(job_state, self._job_dir(name))
            if state["state"] == "done":
                receipt = Receipt.model_validate(state["receipt"])
                workdir = self._job_dir(name) / "work"
                shas = [ref.sha256 for ref in receipt.all_logs()]
                with contextlib.suppress(OSError):
                    state["logs"] = await asyncio.to_thread(read_logs, workdir, shas)
            await self.send({"op": "collected", "job": name, **state})
        elif op == "forget":
            await asyncio.to_thread(remove_job, self._job_dir(msg["job"]))
        else:
            raise ValueError(f"unknown op {op!r}")

    async def _run(self, name: str, job_dir: Path) -> None:
        def progress(stage: str) -> None:
            self.write({"op": "log", "job": name, "line": stage})

        try:
            receipt = await run_job_dir(
                job_dir, packs_dir=self.packs_dir, toolchains=self.toolchains, progress=progress
            )
            shas = [ref.sha256 for ref in receipt.all_logs()]
            logs = await asyncio.to_thread(read_logs, job_dir / "work", shas)
            await self.send(
                {
                    "op": "result",
                    "job": name,
                    "receipt": receipt.model_dump(mode="json"),
                    "logs": logs,
                }
            )
        except asyncio.CancelledError:  # the sandbox is already killed; nobody wants the folder
            await asyncio.to_thread(remove_job, job_dir)
            await self.send({"op": "error", "job": name, "kind": "cancelled", "message": ""})
        except Exception as exc:
            await self.send({"op": "error", "job": name, **error_message(exc)})
        finally:
            self._tasks.pop(name, None)


async def serve_stdio(scratch: Path, toolchain_id: str) -> None:
    """Run a session on this process's stdin/stdout (what `worker serve` does)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    await WorkerSession(scratch, toolchain_id, writer).serve(reader)
