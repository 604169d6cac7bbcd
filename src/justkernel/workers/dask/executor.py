"""A Dask distributed cluster as an executor, for users who already run one (or can).

The lab keeps its queue, fair share and priorities; it hands each job to the cluster as one
task (`dask.task.run_dask_job`) and gets the same receipt back:

- device lanes are Dask worker resources: a performance job asks for `{"device": 1}`, so a
  worker started with `--resources device=1` runs one at a time (the pool does not book lanes
  for this executor: `pool_lanes = False`);
- a worker lost mid-job is Dask's to handle: the scheduler re-runs the task elsewhere and the
  lab's future resolves once; `retries` covers exceptions raised inside the task. A task that
  kills worker after worker ends as `KilledWorker`, which the pool treats like a lost host;
- input packs are scattered once per pack (or read from a shared path with `shared_packs`).

The cluster is an address (`scheduler`), a `LocalCluster` or any cluster object (tests,
notebooks), or one Dask starts over SSH with its own launcher (`ssh_hosts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Mapping
from typing import Any

from justkernel.core.jobs import JobSpec
from justkernel.core.receipts import JobKind, Receipt
from justkernel.operators import InputPack
from justkernel.toolchains.protocol import Progress
from justkernel.workers.dask.task import pack_tar, run_dask_job, worker_offer
from justkernel.workers.executor import (
    ExecRequest,
    HostLost,
    HostState,
    HostUnavailable,
    StateListener,
    check_receipt,
)
from justkernel.workers.job_files import JobFile, store_logs, tree_entries

log = logging.getLogger("justkernel.workers.dask")


class DaskExecutor:
    pool_lanes = False  # the scheduler runs the device lanes (worker resources)

    def __init__(
        self,
        cluster: Any = None,
        *,
        address: str | None = None,
        ssh_hosts: list[str] | None = None,
        name: str = "dask",
        slots: int = 4,
        devices: int = 0,
        toolchain: str = "cpu",
        scratch: str = "/tmp/justkernel-dask",
        shared_packs: bool = False,
        retries: int = 1,
        connect_seconds: float = 10.0,
    ) -> None:
        if sum(x is not None and x != [] for x in (cluster, address, ssh_hosts)) != 1:
            raise ValueError("give exactly one of cluster, address or ssh_hosts")
        self.name = name
        self.slots = slots
        self.devices = devices
        self.toolchain = toolchain
        self.scratch = scratch
        self.shared_packs = shared_packs
        self.retries = retries
        self.connect_seconds = connect_seconds
        self.state = HostState()
        self.offers: set[tuple[str, str]] = set()
        self.client: Any = None
        self._cluster = cluster
        self._own_cluster = False
        self._address = address
        self._ssh_hosts = ssh_hosts or []
        self._packs: dict[str, Any] = {}  # pack hash -> scattered future (or shared path)
        self._pack_lock = asyncio.Lock()
        self._listeners: list[StateListener] = []
        self._retry: asyncio.Task[None] | None = None
        self._closed = False

    def accepts(self, spec: JobSpec) -> bool:
        if not self.offers:
            return spec.toolchain_id == self.toolchain
        return (spec.toolchain_id, spec.toolchain_version) in self.offers

    def on_state_change(self, listener: StateListener) -> None:
        self._listeners.append(listener)

    def _set(self, up: bool, error: str | None = None) -> None:
        changed = self.state.mark_up() if up else self.state.mark_down(error or "down")
        if changed:
            log.warning("dask %s is %s %s", self.name, "up" if up else "down:", error or "")
            for listener in self._listeners:
                listener()
        if not up and self._retry is None and not self._closed:
            self._retry = asyncio.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        """Try the cluster again with backoff (1 s doubling to a minute) until it answers."""
        delay = 1.0
        try:
            while not self._closed and not self.state.up:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 60.0)
                if self.client is not None:
                    with contextlib.suppress(Exception):
                        await self.client.close()
                    self.client = None
                await self.start()
        finally:
            self._retry = None

    async def start(self) -> None:
        """Connect to (or start) the cluster and learn the toolchain versions its workers run."""
        from distributed import Client

        try:
            if self.client is None:
                if self._ssh_hosts:
                    from distributed.deploy.ssh import SSHCluster

                    self._cluster = await SSHCluster(
                        self._ssh_hosts,
                        asynchronous=True,
                        worker_options={"nthreads": 1, "resources": {"device": 1}},
                    )
                    self._own_cluster = True
                target = self._address or self._cluster
                client = Client(target, asynchronous=True, timeout=self.connect_seconds)
                try:
                    await client
                except BaseException:
                    with contextlib.suppress(Exception):
                        await client.close()
                    raise
                self.client = client
            offers = await self.client.run(worker_offer, self.toolchain, self.scratch)
            self.offers = {tuple(v) for v in offers.values()}  # type: ignore[misc]
        except Exception as exc:
            self._set(False, f"cannot use the Dask cluster: {exc}")
            return
        self._packs.clear()  # a new client: data scattered through the old one may be gone
        self._set(True)

    async def _pack_refs(self, packs: Mapping[str, InputPack]) -> dict[str, Any]:
        async with self._pack_lock:
            for pack in packs.values():
                if pack.pack_hash in self._packs:
                    continue
                if self.shared_packs:
                    self._packs[pack.pack_hash] = str(pack.root)
                else:
                    data = await asyncio.to_thread(pack_tar, pack.root)
                    self._packs[pack.pack_hash] = await self.client.scatter(data, hash=False)
        return {p.pack_hash: self._packs[p.pack_hash] for p in packs.values()}

    async def run(
        self, request: ExecRequest, slot: int, device: int | None, progress: Progress
    ) -> Receipt:
        from distributed import KilledWorker

        if self.client is None:
            await self.start()
        if not self.state.up:
            raise HostUnavailable(self.name, self.state.error or "down")
        spec = request.spec
        perf = spec.kind is JobKind.FULL
        name = f"jk-{spec.job_key()[:16]}-{uuid.uuid4().hex[:8]}"
        job = JobFile(spec=spec, slot=slot, parallelism=request.parallelism, worker="dask")
        files = await asyncio.to_thread(tree_entries, request.source_dir)
        refs = await self._pack_refs(request.packs)
        future = self.client.submit(
            run_dask_job,
            name,
            job.to_json(),
            files,
            refs,
            self.scratch,
            key=name,
            pure=False,
            retries=self.retries,
            resources={"device": 1} if perf and self.devices else None,
        )
        progress(f"dask: submitted {name}")
        try:
            result = await future
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.client.cancel(future))
            raise
        except KilledWorker as exc:
            raise HostLost(self.name, f"task {name} killed its workers: {exc}") from None
        except OSError as exc:  # the scheduler went away
            self._set(False, f"lost the scheduler: {exc}")
            raise HostLost(self.name, f"lost the scheduler while running {name}") from None
        progress(f"dask: done on {result['worker']}")
        await asyncio.to_thread(store_logs, request.workdir, result["logs"])
        return check_receipt(self.name, spec, Receipt.model_validate(result["receipt"]))

    async def close(self) -> None:
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
            await asyncio.gather(self._retry, return_exceptions=True)
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()
        if self._own_cluster and self._cluster is not None:
            with contextlib.suppress(Exception):
                await self._cluster.close()
