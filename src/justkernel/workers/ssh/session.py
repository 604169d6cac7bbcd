"""The lab's end of one `justkernel worker serve` session on a host (see worker_session).

One SSH connection, one session process, many jobs at once: each `run` waits for its own
`result` or `error` line, log lines go to the job's progress callback, pongs to the heartbeat.
When the process or the connection ends, every waiting call fails with `SessionLost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import shlex
import time
from collections.abc import Callable
from typing import Any

import asyncssh

from justkernel.toolchains.protocol import Progress

log = logging.getLogger("justkernel.workers.ssh")


class SessionLost(Exception):
    """The session process or its connection ended."""


class SessionError(Exception):
    """The worker could not run the job (`kind` is the worker-side exception's class)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class RemoteSession:
    def __init__(self, host: str, process: asyncssh.SSHClientProcess[bytes]) -> None:
        self.host = host
        self._process = process
        self._jobs: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str, Progress] = {}
        self._collects: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._pongs: dict[int, asyncio.Future[None]] = {}
        self._seq = itertools.count(1)
        self._hello: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.last_pong = time.monotonic()
        self.lost_reason: str | None = None
        self._on_lost: list[Callable[[str], None]] = []
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]

    @classmethod
    async def open(
        cls,
        host: str,
        conn: asyncssh.SSHClientConnection,
        command: str,
        scratch: str,
        toolchain: str,
        hello_seconds: float,
    ) -> tuple[RemoteSession, dict[str, Any]]:
        """Start `<command> serve` (command: `justkernel worker`, or the bundle's launcher) and
        wait for its hello (who it is, what it offers)."""
        argv = f"{command} serve --scratch {shlex.quote(scratch)} --toolchain {toolchain}"
        process = await conn.create_process(argv, encoding=None)
        session = cls(host, process)
        try:
            hello = await asyncio.wait_for(asyncio.shield(session._hello), hello_seconds)
        except (TimeoutError, SessionLost) as exc:
            session.close()
            detail = session.lost_reason or f"no hello within {hello_seconds:.0f}s"
            raise SessionLost(f"worker session did not start ({detail})") from exc
        return session, hello

    def on_lost(self, callback: Callable[[str], None]) -> None:
        self._on_lost.append(callback)

    @property
    def alive(self) -> bool:
        return self.lost_reason is None

    def _send(self, message: dict[str, Any]) -> None:
        if not self.alive:
            raise SessionLost(self.lost_reason or "closed")
        try:
            self._process.stdin.write(json.dumps(message).encode() + b"\n")
        except (OSError, asyncssh.Error, BrokenPipeError) as exc:
            self._lose(f"cannot write to the session: {exc}")
            raise SessionLost(self.lost_reason or "closed") from None

    async def run(
        self,
        name: str,
        message: dict[str, Any],
        progress: Progress,
    ) -> dict[str, Any]:
        """Send a job and wait for its result line: {"receipt": ..., "logs": {...}}."""
        future = asyncio.get_running_loop().create_future()
        self._jobs[name] = future
        self._progress[name] = progress
        try:
            self._send({"op": "run", "job": name, **message})
            reply = await future
        finally:
            self._jobs.pop(name, None)
            self._progress.pop(name, None)
        if reply["op"] == "error":
            raise SessionError(reply.get("kind", "error"), reply.get("message", ""))
        return reply

    def cancel(self, name: str) -> None:
        with contextlib.suppress(SessionLost):
            self._send({"op": "cancel", "job": name})

    def forget(self, name: str) -> None:
        with contextlib.suppress(SessionLost):
            self._send({"op": "forget", "job": name})

    async def collect(self, name: str, wait_seconds: float) -> dict[str, Any]:
        future = asyncio.get_running_loop().create_future()
        self._collects[name] = future
        try:
            self._send({"op": "collect", "job": name})
            return await asyncio.wait_for(future, wait_seconds)
        finally:
            self._collects.pop(name, None)

    async def ping(self, wait_seconds: float) -> float:
        """Round trip of one heartbeat in seconds; raises TimeoutError or SessionLost."""
        seq = next(self._seq)
        future = asyncio.get_running_loop().create_future()
        self._pongs[seq] = future
        t = time.monotonic()
        try:
            self._send({"op": "ping", "seq": seq})
            await asyncio.wait_for(future, wait_seconds)
        finally:
            self._pongs.pop(seq, None)
        return time.monotonic() - t

    # -- reading ----------------------------------------------------------------------------
    async def _read_stdout(self) -> None:
        reason = "the session ended"
        try:
            while True:
                line = await self._process.stdout.readline()
                if not line:
                    break
                try:
                    self._dispatch(json.loads(line))
                except (ValueError, KeyError) as exc:
                    log.warning("host %s: unreadable session line (%s)", self.host, exc)
        except (asyncssh.Error, OSError, asyncio.IncompleteReadError) as exc:
            text = str(exc) or type(exc).__name__
            reason = text if "connection" in text.lower() else f"connection lost: {text}"
        except asyncio.CancelledError:
            reason = "closed by the lab"
        if reason == "the session ended":
            status = self._process.exit_status
            if status is not None:
                reason = f"the worker session exited with status {status}"
            else:
                reason = "the connection to the host was lost"
        self._lose(reason)

    async def _read_stderr(self) -> None:
        with contextlib.suppress(asyncssh.Error, OSError, asyncio.CancelledError):
            while line := await self._process.stderr.readline():
                log.info("host %s worker: %s", self.host, line.decode(errors="replace").rstrip())

    def _dispatch(self, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == "hello":
            if not self._hello.done():
                self._hello.set_result(msg)
        elif op == "pong":
            self.last_pong = time.monotonic()
            pong = self._pongs.get(msg.get("seq"))  # type: ignore[arg-type]
            if pong is not None and not pong.done():
                pong.set_result(None)
        elif op == "log":
            callback = self._progress.get(msg.get("job", ""))
            if callback is not None:
                callback(msg.get("line", ""))
        elif op in ("result", "error"):
            job = self._jobs.get(msg.get("job") or "")
            if job is not None and not job.done():
                job.set_result(msg)
            elif msg.get("job") is None:
                log.warning("host %s worker error: %s", self.host, msg.get("message"))
        elif op == "collected":
            waiter = self._collects.get(msg.get("job", ""))
            if waiter is not None and not waiter.done():
                waiter.set_result(msg)

    def _lose(self, reason: str) -> None:
        if self.lost_reason is not None:
            return
        self.lost_reason = reason
        waiters = [
            self._hello,
            *self._jobs.values(),
            *self._collects.values(),
            *self._pongs.values(),
        ]
        for future in waiters:
            if not future.done():
                future.set_exception(SessionLost(reason))
        for callback in self._on_lost:
            callback(reason)

    async def shutdown(self, grace: float) -> None:
        """Close stdin and give the worker `grace` seconds to act on what it was sent (a
        `forget`, a `cancel`) and exit, then close."""
        if self.alive:
            with contextlib.suppress(Exception):
                self._process.stdin.write_eof()
                await asyncio.wait_for(self._process.wait_closed(), grace)
        self.close()

    def close(self, reason: str = "closed by the lab") -> None:
        """End the session from the lab's side (running jobs finish on the host)."""
        self._lose(reason)
        with contextlib.suppress(Exception):
            self._process.stdin.write_eof()
        with contextlib.suppress(Exception):
            self._process.close()
        for task in self._tasks:
            task.cancel()
