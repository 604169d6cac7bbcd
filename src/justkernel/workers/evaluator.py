"""The evaluation service: one candidate folder in, one receipt out, through cache and pool.

    snapshot (private copy) ─► tree hash ─► job key ─► cache? ─► pool slot ─► toolchain.run
                                                         │                        │
                                                         └─ hit: stored receipt   └─► blobs, cache

The snapshot comes first so that edits made while the job waits or runs change nothing, and
the hash names exactly what ran. Full validations queue as `Priority.FULL_VALIDATION`, probes
as `Priority.PROBE`; the pool takes teams in turn within a priority. Cancelling the awaiting
task cancels the job and kills its sandboxed processes before `evaluate` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from justkernel.core.jobs import LOCAL_PACK, PERF_PACK, JobSpec
from justkernel.core.receipts import JobKind, Receipt, utc_now
from justkernel.faults import crash_point
from justkernel.operators import (
    CaseSpec,
    InputPack,
    OperatorDefinition,
    local_cases,
    perf_cases,
)
from justkernel.operators.pack_process import ensure_input_pack_apart
from justkernel.settings.config import Settings
from justkernel.store.blobs import BlobStore
from justkernel.toolchains.protocol import Progress, Toolchain
from justkernel.toolchains.sandbox.paths import open_dir
from justkernel.toolchains.tree import check_tree, snapshot_tree
from justkernel.workers.cache import ReceiptCache
from justkernel.workers.executor import ExecRequest, Executor
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.memory import return_large_buffers
from justkernel.workers.pool import Job, JobCancelled, Priority, SlotGrant, WorkerPool

CaseSource = Callable[[OperatorDefinition], Sequence[CaseSpec]]


class CaseSelectionError(ValueError):
    """Unknown case ids, or a case list where the job kind does not take one."""


@dataclass(frozen=True)
class CaseSets:
    """Functional and perf cases to run instead of the operator's own (the local judge's
    hidden points); the packs and job keys follow them, so results never mix."""

    local: tuple[CaseSpec, ...]
    perf: tuple[CaseSpec, ...]


def _traversable(folder: Path) -> None:
    """Add o+x to the data folder so bwrap, running as the sandbox uid, can reach the packs
    and job folders inside (nothing is listed or read through it)."""
    folder.mkdir(parents=True, exist_ok=True)
    mode = folder.stat().st_mode
    if mode & 0o001 == 0:
        os.chmod(folder, (mode & 0o7777) | 0o011)


def _open_tree(root: Path) -> None:
    """a+rX on a pack so the sandbox uid can read the inputs it binds."""
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)


class Evaluator:
    """Evaluates candidates on a pool with one toolchain; safe for concurrent callers."""

    def __init__(
        self,
        settings: Settings,
        pool: WorkerPool,
        toolchain: Toolchain,
        blobs: BlobStore,
        *,
        definition: OperatorDefinition | None = None,
        sim_parallelism: int = 1,
        keep_jobs: bool = False,
        cases: CaseSets | None = None,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.toolchain = toolchain
        self.blobs = blobs
        self.definition = definition or getattr(toolchain, "definition", None)
        if self.definition is None:
            raise ValueError("the toolchain has no operator definition; pass one")
        self.sim_parallelism = sim_parallelism
        self.keep_jobs = keep_jobs
        return_large_buffers()  # this process checks outputs and packs traces (workers.memory)
        self._local = LocalExecutor(toolchain, slots=1)  # runs jobs granted the bare local site
        self._local_cases: CaseSource = (lambda _d: cases.local) if cases else local_cases
        self._perf_cases: CaseSource = (lambda _d: cases.perf) if cases else perf_cases
        data = settings.resolved_data_dir
        self.packs_dir = data / "packs"
        self.jobs_dir = data / "jobs"
        self.cache = ReceiptCache(data / "receipts")
        self.submissions = 0  # jobs handed to the pool (cache hits never are)
        self._packs: dict[str, InputPack] = {}
        self._pack_lock = asyncio.Lock()
        # job key -> set when the one run of that key in flight ends: a team asking for the
        # same job meanwhile (teams often reach the same source) waits for its cached receipt
        # instead of running it again, and runs it itself only if none was cached
        self._running: dict[str, asyncio.Event] = {}

    # -- inputs ---------------------------------------------------------------------------
    def local_case_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self._local_cases(self.definition))

    def perf_case_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self._perf_cases(self.definition))

    def select_cases(self, kind: JobKind | str, case_ids: Sequence[str] | None) -> tuple[str, ...]:
        """The functional cases of a job, in the operator's order; unknown ids are an error."""
        kind = JobKind(kind)
        known = self.local_case_ids()
        if case_ids is None:
            return known
        unknown = [c for c in case_ids if c not in known]
        if unknown:
            raise CaseSelectionError(f"unknown case ids: {', '.join(unknown)}")
        if not case_ids:
            raise CaseSelectionError("no case ids given")
        chosen = set(case_ids)
        if kind is JobKind.FULL and chosen != set(known):
            raise CaseSelectionError("a full job runs every local case; use a probe for a subset")
        return tuple(c for c in known if c in chosen)

    async def packs(self, kind: JobKind) -> dict[str, InputPack]:
        """The input packs a job kind needs, built once per case set under data_dir/packs/."""
        roles = {LOCAL_PACK: self._local_cases}
        if kind is JobKind.FULL:
            roles[PERF_PACK] = self._perf_cases
        async with self._pack_lock:
            for role, cases in roles.items():
                if role not in self._packs:
                    self._packs[role] = await asyncio.to_thread(self._build_pack, cases)
        return {role: self._packs[role] for role in roles}

    def _build_pack(self, cases_of: CaseSource) -> InputPack:
        _traversable(self.packs_dir.parent)
        open_dir(self.packs_dir)
        # generated in a child: the lab process never holds a pack's arrays (pack_process)
        pack = ensure_input_pack_apart(cases_of(self.definition), self.packs_dir, self.definition)
        _open_tree(pack.root)
        return pack

    # -- one candidate --------------------------------------------------------------------
    async def evaluate(
        self,
        source_dir: Path,
        *,
        team: str = "local",
        kind: JobKind | str = JobKind.FULL,
        case_ids: Sequence[str] | None = None,
        priority: Priority | None = None,
        progress: Progress | None = None,
    ) -> Receipt:
        """Snapshot, key, cache, pool, receipt. Raises CandidateError for a folder that is not
        a project, CaseSelectionError for bad case ids, and ToolchainError / SandboxError
        when the infrastructure fails (nothing is cached then)."""
        kind = JobKind(kind)
        report = progress or (lambda _stage: None)

        def notify(stage: str) -> None:
            if stage.startswith("simulate "):  # a case's cycle simulation is starting
                crash_point("simulate.running")
            report(stage)

        chosen = self.select_cases(kind, case_ids)
        submitted_at = utc_now()
        t0 = time.monotonic()
        notify("snapshot")
        _traversable(self.jobs_dir.parent)
        job_dir = Path(tempfile.mkdtemp(prefix=f"{_safe(team)}-", dir=open_dir(self.jobs_dir)))
        os.chmod(job_dir, 0o755)
        try:
            src = job_dir / "src"
            await asyncio.to_thread(snapshot_tree, Path(source_dir), src, self.definition)
            tree = await asyncio.to_thread(check_tree, src, self.definition)
            snapshot_seconds = time.monotonic() - t0
            packs = await self.packs(kind)
            spec = JobSpec(
                operator=self.definition.name,
                kind=kind,
                case_ids=chosen,
                perf_case_ids=self.perf_case_ids() if kind is JobKind.FULL else (),
                source_tree_hash=tree.tree_hash,
                input_packs={role: p.pack_hash for role, p in packs.items()},
                toolchain_id=self.toolchain.id,
                toolchain_version=self.toolchain.version,
            )
            key = spec.job_key()
            leading: asyncio.Event | None = None
            if tree.ok:  # a refused tree must never be answered by the clean tree's receipt
                while (cached := self.cache.get(key)) is None and key in self._running:
                    notify("waiting: the same job is running for another caller")
                    await self._running[key].wait()  # then its receipt, if it was cached
                if cached is not None:
                    notify("cache hit")
                    return cached.model_copy(update={"team": team})
                leading = self._running[key] = asyncio.Event()
            try:
                receipt = await self._run_on_pool(spec, src, packs, job_dir, team, priority, notify)
                receipt.team = team
                receipt.submitted_at = submitted_at
                receipt.durations.snapshot = snapshot_seconds
                await asyncio.to_thread(self._keep_logs, receipt, job_dir / "work" / "logs")
                if tree.ok:
                    await asyncio.to_thread(self.cache.put, receipt)
                notify("done")
                return receipt
            finally:
                if leading is not None:
                    del self._running[key]
                    leading.set()
        finally:
            if not self.keep_jobs:
                await asyncio.to_thread(shutil.rmtree, job_dir, True)

    async def _run_on_pool(
        self,
        spec: JobSpec,
        src: Path,
        packs: dict[str, InputPack],
        job_dir: Path,
        team: str,
        priority: Priority | None,
        notify: Progress,
    ) -> Receipt:
        if priority is None:
            priority = Priority.FULL_VALIDATION if spec.kind is JobKind.FULL else Priority.PROBE
        request = ExecRequest(spec, src, packs, job_dir / "work", self.sim_parallelism, team)

        async def work(grant: SlotGrant) -> Receipt:
            executor = grant.executor or self._local
            return await executor.run(request, grant.slot, grant.device, notify)

        def eligible(executor: Executor | None) -> bool:
            return executor is None or executor.accepts(spec)

        label = f"{spec.kind.value} {spec.source_tree_hash[:12]}"
        job = Job(
            team,
            work,
            priority=priority,
            label=label,
            perf=spec.kind is JobKind.FULL,  # the cycle simulation is the performance capture
            eligible=eligible,
            on_requeue=lambda exc: notify(f"re-queued: {exc}"),
        )
        handle = self.pool.submit(job)
        self.submissions += 1
        notify("queued")
        try:
            receipt = await asyncio.shield(handle.future)
        except asyncio.CancelledError:
            handle.cancel()  # queued: removed; running: its task is cancelled, sandbox killed
            with contextlib.suppress(JobCancelled, Exception):
                await asyncio.wait_for(asyncio.shield(handle.future), timeout=30)
            raise
        job = handle.job
        if job.started_at is not None:
            receipt.durations.queued = job.started_at - job.submitted_at
        return receipt

    def _keep_logs(self, receipt: Receipt, folder: Path) -> None:
        """Move every log the receipt names into the blob store (content-addressed)."""
        for ref in receipt.all_logs():
            data = (folder / ref.sha256).read_bytes()
            if self.blobs.put(data) != ref.sha256:
                raise RuntimeError(f"log {ref.name} changed on disk before it was stored")


def _safe(team: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in team)
    return cleaned[:40] or "team"
