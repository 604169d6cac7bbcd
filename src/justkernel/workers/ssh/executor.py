"""One SSH host as an executor: pooled connection, cached packs, leases, down/up probing.

    run(job) ─► connection + worker session (one per host, shared by its slots)
             ─► free scratch? ─► input packs on the host? (by hash; upload once, marker last)
             ─► run message (spec + candidate files) ─► log lines ─► result (receipt + logs)
             ─► same job key? ─► logs into workdir/logs ─► receipt to the evaluator and cache

While a job runs it holds a lease, renewed by every heartbeat the session answers. A lost
connection or an expired lease gives the job back to the pool (`HostLost`: re-queued once,
elsewhere), marks the host down and starts probing it with backoff (1 s doubling to a minute).
When it answers again the host is up, the pool dispatches to it, and the receipts of jobs it
finished after it was given up are collected into `LateReceipts` as history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import asyncssh

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import Receipt
from justkernel.operators import InputPack
from justkernel.settings.secrets import Secret
from justkernel.toolchains.protocol import Progress, ToolchainError
from justkernel.workers.cache import ReceiptCache
from justkernel.workers.executor import (
    ExecRequest,
    HostError,
    HostLost,
    HostState,
    HostUnavailable,
    StateListener,
    check_receipt,
    pack_bytes,
)
from justkernel.workers.hosts import HostConfig
from justkernel.workers.job_files import store_logs, tree_entries
from justkernel.workers.leases import LateReceipts, LeaseTable
from justkernel.workers.ssh.code_bundle import worker_command
from justkernel.workers.ssh.session import RemoteSession, SessionError, SessionLost
from justkernel.workers.ssh.transport import (
    MiB,
    check_free,
    connect,
    pack_present,
    upload_pack,
)

log = logging.getLogger("justkernel.workers.ssh")


@dataclass(frozen=True)
class SshTiming:
    connect_seconds: float = 15.0
    hello_seconds: float = 60.0  # the session imports the pipeline and checks its tools
    heartbeat_seconds: float = 5.0
    lease_seconds: float = 30.0  # a job's lease expires after this long without a heartbeat
    probe_first: float = 1.0
    probe_max: float = 60.0
    late_wait_seconds: float = 3600.0  # how long to wait for a given-up job's late receipt


@dataclass
class _LostJob:
    job_key: str
    lost_at: float


class SshExecutor:
    pool_lanes = True

    def __init__(
        self,
        host: HostConfig,
        *,
        password: Secret | None = None,
        late: LateReceipts | None = None,
        cache: ReceiptCache | None = None,
        leases: LeaseTable | None = None,
        timing: SshTiming | None = None,
    ) -> None:
        self.host = host
        self.name = host.name
        self.slots = host.slots
        self.devices = host.devices
        self.state = HostState()
        self.timing = timing or SshTiming()
        self.late = late or LateReceipts()
        self.leases = leases or LeaseTable()
        self.hello: dict[str, Any] | None = None
        self.offer: tuple[str, str] | None = None  # (toolchain id, version) the host runs
        self.pack_uploads = 0
        self._password = password
        self._cache = cache
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: asyncssh.SFTPClient | None = None
        self._session: RemoteSession | None = None
        self._connect_lock = asyncio.Lock()
        self._collecting = asyncio.Lock()
        self._pack_locks: dict[str, asyncio.Lock] = {}
        self._packs_on_host: set[str] = set()
        self._pack_sizes: dict[str, int] = {}
        self._lost_jobs: dict[str, _LostJob] = {}
        self._listeners: list[StateListener] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._probing = False
        self._closed = False

    @property
    def packs_dir(self) -> str:
        return f"{self.host.scratch_dir.rstrip('/')}/packs"

    # -- state ------------------------------------------------------------------------------
    def accepts(self, spec: JobSpec) -> bool:
        if self.offer is None:  # not connected yet: the configured toolchain must match
            return spec.toolchain_id == self.host.toolchain
        return self.offer == (spec.toolchain_id, spec.toolchain_version)

    def on_state_change(self, listener: StateListener) -> None:
        self._listeners.append(listener)

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _down(self, reason: str) -> None:
        if self.state.mark_down(reason):
            log.warning("host %s is down: %s", self.name, reason)
            self._notify()
        self._drop_connection()
        if not self._probing and not self._closed:
            self._probing = True
            self._spawn(self._probe())

    def _drop_connection(self) -> None:
        session, conn = self._session, self._conn
        self._session = self._conn = self._sftp = None
        if session is not None:
            session.close()
        if conn is not None:
            conn.close()

    async def _probe(self) -> None:
        """Reconnect with backoff until the host answers (and has room) again."""
        delay = self.timing.probe_first
        try:
            while not self._closed:
                await asyncio.sleep(delay)
                try:
                    async with self._connect_lock:
                        await self._open()
                except HostUnavailable as exc:
                    self.state.error = exc.reason
                    self.state.probes += 1
                    delay = min(delay * 2, self.timing.probe_max)
                    continue
                if self.state.mark_up():
                    log.warning("host %s is up again", self.name)
                    self._notify()
                if self._lost_jobs:
                    self._spawn(self._collect_late())
                return
        finally:
            self._probing = False

    # -- connection and session -------------------------------------------------------------
    async def start(self) -> None:
        with contextlib.suppress(HostUnavailable):
            await self._ensure()

    async def _ensure(self) -> RemoteSession:
        session = self._session
        if session is not None and session.alive:
            return session
        if not self.state.up:
            raise HostUnavailable(self.name, self.state.error or "down")
        async with self._connect_lock:
            if self._session is None or not self._session.alive:
                try:
                    await self._open()
                except HostUnavailable as exc:
                    self._down(exc.reason)
                    raise
        assert self._session is not None
        return self._session

    async def _open(self) -> None:
        """Connect, start the worker session, check its toolchain and free scratch."""
        self._drop_connection()
        t = self.timing
        conn = await connect(
            self.host, self._password, connect_seconds=t.connect_seconds, keepalive=5.0
        )
        command = "the worker command"
        try:
            command = await worker_command(self.host, conn)
            session, hello = await RemoteSession.open(
                self.name,
                conn,
                command,
                self.host.scratch_dir,
                self.host.toolchain,
                t.hello_seconds,
            )
        except HostUnavailable:
            conn.close()
            raise
        except (SessionLost, asyncssh.Error, OSError) as exc:
            conn.close()
            raise HostUnavailable(
                self.name, f"the worker did not start with `{command} serve`: {exc}"
            ) from None
        try:
            if "toolchain_error" in hello:
                raise HostUnavailable(self.name, f"toolchain not found: {hello['toolchain_error']}")
            try:
                sftp = await conn.start_sftp_client()
            except (asyncssh.Error, OSError) as exc:
                raise HostUnavailable(self.name, f"no SFTP subsystem: {exc}") from None
            need = self.host.min_free_mb * MiB
            await check_free(self.host, sftp, need, "the free space set by min_free_mb")
        except BaseException:
            session.close()
            conn.close()
            raise
        self.hello = hello
        self.offer = (hello["toolchain"]["id"], hello["toolchain"]["version"])
        self._conn, self._sftp, self._session = conn, sftp, session
        session.on_lost(lambda reason: self._on_session_lost(session, reason))
        self._spawn(self._heartbeat(session))

    def _on_session_lost(self, session: RemoteSession, reason: str) -> None:
        if session is self._session and not self._closed:
            self._down(reason)

    async def _heartbeat(self, session: RemoteSession) -> None:
        """Renew this host's leases on every answer; an unanswered heartbeat ends the session."""
        t = self.timing
        while session.alive and not self._closed:
            await asyncio.sleep(t.heartbeat_seconds)
            try:
                await session.ping(t.lease_seconds)
            except SessionLost:
                return
            except TimeoutError:
                expired = len(self.leases.expired(self.name))
                session.close(f"no heartbeat for {t.lease_seconds:.0f}s ({expired} leases expired)")
                return
            self.leases.renew_host(self.name)
            if self._lost_jobs:
                await self._collect_late()

    # -- one job ----------------------------------------------------------------------------
    async def run(
        self, request: ExecRequest, slot: int, device: int | None, progress: Progress
    ) -> Receipt:
        spec = request.spec
        session = await self._ensure()
        if not self.accepts(spec):
            raise HostUnavailable(
                self.name,
                f"runs toolchain {self.offer}, the job needs "
                f"({spec.toolchain_id!r}, {spec.toolchain_version!r})",
            )
        try:
            await self._ready_for(request.packs)
        except HostUnavailable as exc:
            self._down(exc.reason)
            raise
        except (asyncssh.Error, OSError) as exc:
            self._down(f"connection lost while preparing the job ({exc})")
            raise HostUnavailable(self.name, f"connection lost while preparing: {exc}") from None
        name = f"{spec.job_key()[:16]}-{uuid.uuid4().hex[:8]}"
        message = {
            "spec": spec.model_dump(mode="json"),
            "slot": slot,
            "parallelism": request.parallelism,
            "worker": f"ssh:{self.name}",
            "files": await asyncio.to_thread(tree_entries, request.source_dir),
        }
        self.leases.grant(name, self.name, spec.job_key(), self.timing.lease_seconds)
        try:
            reply = await session.run(name, message, progress)
        except SessionLost as exc:
            self._lost_jobs[name] = _LostJob(spec.job_key(), time.monotonic())
            raise HostLost(self.name, f"lost while running job {name} ({exc})") from None
        except SessionError as exc:
            raise self._job_error(exc) from None
        except asyncio.CancelledError:
            session.cancel(name)  # the worker kills the sandbox and removes the folder
            raise
        finally:
            self.leases.release(name)
        session.forget(name)
        try:
            receipt = check_receipt(self.name, spec, Receipt.model_validate(reply["receipt"]))
        except HostError as exc:  # a host that answers for another job is not trusted
            self._down(exc.reason)
            raise
        await asyncio.to_thread(store_logs, request.workdir, reply.get("logs") or {})
        return receipt

    def _job_error(self, exc: SessionError) -> Exception:
        """A sandbox that cannot start is the host's problem (down, job elsewhere); other
        infrastructure errors are reported like a local ToolchainError."""
        if exc.kind.startswith("Sandbox") or exc.kind == "PackError":
            self._packs_on_host.clear()
            self._down(f"{exc.kind}: {exc.message}")
            return HostUnavailable(self.name, f"{exc.kind}: {exc.message}")
        return ToolchainError(f"host {self.name}: {exc.kind}: {exc.message}")

    async def _ready_for(self, packs: Mapping[str, InputPack]) -> None:
        """Free scratch for the job; every input pack on the host (uploaded once)."""
        sftp = self._sftp
        if sftp is None:
            raise HostUnavailable(self.name, "not connected")
        missing = [p for p in packs.values() if p.pack_hash not in self._packs_on_host]
        need = self.host.min_free_mb * MiB
        if not missing:
            await check_free(self.host, sftp, need, "a job's work folder")
            return
        for pack in missing:
            digest = pack.pack_hash
            async with self._pack_locks.setdefault(digest, asyncio.Lock()):
                if digest in self._packs_on_host:
                    continue
                if await pack_present(sftp, self.packs_dir, digest):
                    self._packs_on_host.add(digest)
                    continue
                if digest not in self._pack_sizes:
                    sizes = await asyncio.to_thread(pack_bytes, {"p": pack})
                    self._pack_sizes.update(sizes)
                size = self._pack_sizes[digest]
                what = f"input pack {digest[:12]} of {size / MiB:.1f} MiB + min_free_mb"
                await check_free(self.host, sftp, size + need, what)
                await upload_pack(self.host, sftp, pack.root, self.packs_dir, digest)
                self.pack_uploads += 1
                self._packs_on_host.add(digest)
                log.info("host %s: uploaded input pack %s", self.name, digest[:12])

    # -- late receipts ----------------------------------------------------------------------
    async def _collect_late(self) -> None:
        """Fetch receipts of jobs given up on this host; keep them as history only."""
        session = self._session
        if session is None or not session.alive or self._collecting.locked():
            return
        async with self._collecting:
            await self._collect_from(session)

    async def _collect_from(self, session: RemoteSession) -> None:
        for name, lost in list(self._lost_jobs.items()):
            try:
                reply = await session.collect(name, self.timing.lease_seconds)
            except (SessionLost, TimeoutError):
                return
            state = reply.get("state")
            waited = time.monotonic() - lost.lost_at
            if state == "running" and waited < self.timing.late_wait_seconds:
                continue
            if state == "done":
                receipt = Receipt.model_validate(reply["receipt"])
                counted = self._cache is not None and receipt.job_key in self._cache
                self.late.record(receipt, self.name, counted_elsewhere=counted)
            self._lost_jobs.pop(name, None)
            session.forget(name)

    @property
    def lost_jobs(self) -> list[str]:
        return list(self._lost_jobs)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        conn, session = self._conn, self._session
        if session is not None:
            await session.shutdown(grace=5.0)
        self._drop_connection()
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 5)
