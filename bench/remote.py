"""SSH executor throughput against loopback, next to the local executor on the same work.

Run: uv run python bench/remote.py [--jobs N] [--slots 1,2]

Starts a private OpenSSH server on 127.0.0.1 (needs root and openssh-server, like the tests),
warms the host once (worker session, input packs uploaded, harness object built), then runs
the same kind of work through a pool of local slots and through a pool of one SSH host with the
same number of slots: full jobs on the perf set (15 cases + 3 callgrind runs), the fast fixture
kernel with a different comment each time, so every job really runs.

Prints jobs/min for both and the SSH overhead per job: the lab-side seconds of a job minus the
pipeline seconds the receipt reports, local versus remote (sequential, 1 slot, where nothing
else shares the job's time). Goal: SSH overhead under 10 % per job on the perf set.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from justkernel.core.receipts import Receipt, Status  # noqa: E402
from justkernel.settings.config import Settings  # noqa: E402
from justkernel.store.blobs import BlobStore  # noqa: E402
from justkernel.toolchains import CpuToolchain  # noqa: E402
from justkernel.workers.evaluator import Evaluator  # noqa: E402
from justkernel.workers.executor import Executor  # noqa: E402
from justkernel.workers.hosts import HostConfig  # noqa: E402
from justkernel.workers.local_executor import LocalExecutor  # noqa: E402
from justkernel.workers.pool import WorkerPool  # noqa: E402
from justkernel.workers.ssh.executor import SshExecutor  # noqa: E402
from tests.remote.sshd import SshServer, unavailable_reason  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from evaluate import FAST, make_candidate  # noqa: E402


class Bench:
    def __init__(self, root: Path, server: SshServer) -> None:
        self.root = root
        self.settings = Settings(data_dir=root / "data", config_dir=root / "config")
        self.toolchain = CpuToolchain(cache_dir=root / "data" / "toolchains" / "cpu")
        self.host = HostConfig(
            name="loopback",
            address="127.0.0.1",
            port=server.port,
            user="root",
            key_file=server.user_key,
            known_hosts_file=server.known_hosts(),
            scratch_dir=str(root / "scratch"),
            worker_command=f"{sys.executable} -m justkernel.cli.main",
            slots=8,
        )
        self.tag = 0

    def candidates(self, n: int) -> list[Path]:
        out = []
        for _ in range(n):
            self.tag += 1
            out.append(make_candidate(self.root, f"fast-{self.tag}", FAST, str(self.tag)))
        return out

    def executor(self, kind: str, slots: int) -> Executor:
        if kind == "local":
            return LocalExecutor(self.toolchain, slots)
        return SshExecutor(self.host.model_copy(update={"slots": slots}))

    def evaluator(self, executor: Executor) -> Evaluator:
        return Evaluator(
            self.settings,
            WorkerPool([executor]),
            self.toolchain,
            BlobStore(self.settings.blobs_dir),
        )

    async def sequential(self, kind: str, n: int) -> tuple[list[float], list[Receipt]]:
        """Jobs one after another on one slot: lab-side seconds per job and the receipts."""
        ev = self.evaluator(self.executor(kind, 1))
        walls, receipts = [], []
        try:
            await ev.pool.start()
            for src in self.candidates(n):
                t = time.perf_counter()
                receipts.append(await ev.evaluate(src, team="bench"))
                walls.append(time.perf_counter() - t)
        finally:
            await ev.pool.close()
        return walls, receipts

    async def burst(self, kind: str, slots: int, n: int) -> tuple[float, list[Receipt]]:
        """n jobs submitted at once to `slots` slots: wall seconds for all of them."""
        ev = self.evaluator(self.executor(kind, slots))
        try:
            await ev.pool.start()
            sources = self.candidates(n)
            t = time.perf_counter()
            receipts = await asyncio.gather(
                *(ev.evaluate(s, team=f"t{i % 4}") for i, s in enumerate(sources))
            )
            return time.perf_counter() - t, list(receipts)
        finally:
            await ev.pool.close()


def check(receipts: list[Receipt], worker: str) -> None:
    bad = [r for r in receipts if r.status is not Status.MEASURED or r.executor.worker != worker]
    if bad:
        raise SystemExit(f"unexpected receipts: {[(r.status, r.executor.worker) for r in bad]}")


async def main(jobs: int, slot_counts: list[int]) -> None:
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    root = Path(tempfile.mkdtemp(prefix="jk-bench-remote-"))
    os.chmod(root, 0o755)
    (root / "scratch").mkdir(mode=0o755)
    keys = Path(tempfile.mkdtemp(prefix="jk-bench-sshd-"))  # apart: candidates get chmod 644
    server = SshServer(keys)
    server.start()
    try:
        bench = Bench(root, server)
        print(f"host: {os.cpu_count()} cores · {bench.toolchain.executor(None).cpu_model}")
        print(f"toolchain: cpu {bench.toolchain.version}; sshd on 127.0.0.1:{server.port}")
        t = time.perf_counter()
        walls, _ = await bench.sequential("ssh", 1)
        print(
            f"warm-up, first job on a fresh host (session start, input packs uploaded, "
            f"harness built there): {time.perf_counter() - t:.1f} s"
        )
        walls, _ = await bench.sequential("local", 1)  # warm the local harness object too

        print(f"\nsequential, 1 slot, {jobs} full jobs each (fast kernel, perf set):")
        overhead: dict[str, float] = {}
        per_job: dict[str, float] = {}
        for kind in ("local", "ssh", "local", "ssh"):  # interleaved: load drifts both ways
            walls, receipts = await bench.sequential(kind, jobs)
            check(receipts, "local" if kind == "local" else "ssh:loopback")
            lab_side = [w - (r.durations.total or 0) for w, r in zip(walls, receipts, strict=True)]
            per_job.setdefault(kind, 0.0)
            per_job[kind] += statistics.mean(walls) / 2
            overhead.setdefault(kind, 0.0)
            overhead[kind] += statistics.mean(lab_side) / 2
            pipeline = statistics.mean(r.durations.total or 0 for r in receipts)
            print(
                f"  {kind:<5} {statistics.mean(walls):5.2f} s per job "
                f"({60 / statistics.mean(walls):4.1f} jobs/min); pipeline {pipeline:5.2f} s, "
                f"around it {statistics.mean(lab_side):5.3f} s"
            )
        extra = overhead["ssh"] - overhead["local"]
        print(
            f"  SSH overhead per job: {extra:.3f} s = {100 * extra / per_job['local']:.1f} % of "
            f"a local job ({per_job['local']:.2f} s); wall per job {per_job['ssh']:.2f} s vs "
            f"{per_job['local']:.2f} s ({100 * (per_job['ssh'] / per_job['local'] - 1):+.1f} %)"
        )

        for slots in slot_counts:
            print(f"\nburst, {slots} slot{'s' if slots > 1 else ''}, {jobs} full jobs at once:")
            rates: dict[str, list[float]] = {"local": [], "ssh": []}
            for kind in ("local", "ssh", "ssh", "local"):  # interleaved, as above
                wall, receipts = await bench.burst(kind, slots, jobs)
                check(receipts, "local" if kind == "local" else "ssh:loopback")
                rates[kind].append(60 * jobs / wall)
                print(f"  {kind:<5} {wall:5.1f} s = {60 * jobs / wall:4.1f} jobs/min")
            local, ssh = statistics.mean(rates["local"]), statistics.mean(rates["ssh"])
            print(
                f"  mean: local {local:.1f} jobs/min, ssh {ssh:.1f} jobs/min "
                f"({100 * (ssh / local - 1):+.1f} %)"
            )
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(keys, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--slots", default="1,2", help="comma-separated slot counts for bursts")
    args = parser.parse_args()
    asyncio.run(main(args.jobs, [int(s) for s in args.slots.split(",")]))
