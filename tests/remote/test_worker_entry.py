"""`justkernel worker run-job` and `worker info` as a host runs them, and the pool that
`hosts.toml` describes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from justkernel.core.receipts import JobKind, Receipt, Status
from justkernel.settings.config import ConfigError, Settings
from justkernel.workers.dask.executor import DaskExecutor
from justkernel.workers.hosts import load_workers
from justkernel.workers.job_files import JobFile, tree_entries, write_job
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.pool import LocalPool, WorkerPool
from justkernel.workers.pool_config import build_pool
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.sshd import open_folder
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    make_project,
    packs,
    require_tools,
    spec_for,
    toolchain,
)

pytestmark = pytest.mark.timeout(180)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "worker", *args],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )


async def test_run_job_prints_the_receipt_of_the_job_in_its_folder() -> None:
    require_tools()
    tc = toolchain()
    pack_set = await packs(JobKind.PROBE)
    src = make_project("fast_fused_blocked")
    spec = spec_for(tc, src, pack_set, JobKind.PROBE, [SMALL_CASE])
    job_dir = open_folder("jk-job-") / "jobs" / "one"
    write_job(job_dir, JobFile(spec, slot=3, worker="cli-test"), tree_entries(src))
    packs_dir = pack_set["local"].root.parent

    done = cli("run-job", str(job_dir), "--packs", str(packs_dir))
    assert done.returncode == 0, done.stderr
    receipt = Receipt.model_validate_json(done.stdout)
    assert receipt.job_key == spec.job_key() and receipt.status is Status.PROBE_PASSED
    assert receipt.executor.worker == "cli-test" and receipt.executor.slot == 3
    assert receipt.executor.toolchain_version == tc.version
    assert "compile" in done.stderr  # progress went to stderr
    on_disk = Receipt.model_validate_json((job_dir / "receipt.json").read_text())
    assert on_disk == receipt
    assert {p.name for p in (job_dir / "work" / "logs").iterdir()} >= {
        ref.sha256 for ref in receipt.all_logs()
    }

    # a spec for another toolchain version is refused, never judged
    other = spec.model_copy(update={"toolchain_version": "0" * 16})
    bad_dir = job_dir.parent / "two"
    write_job(bad_dir, JobFile(other), tree_entries(src))
    refused = cli("run-job", str(bad_dir), "--packs", str(packs_dir))
    assert refused.returncode == 3 and "ToolchainError" in refused.stderr
    assert json.loads((bad_dir / "error.json").read_text())["kind"] == "ToolchainError"


def test_worker_info_names_the_host_and_the_toolchain() -> None:
    scratch = open_folder("jk-info-")
    done = cli("info", "--scratch", str(scratch))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["toolchain"]["id"] == "cpu"
    assert info["toolchain"]["version"] == toolchain().version
    assert info["free_bytes"] > 0 and info["host"]


def test_hosts_toml_builds_the_pool(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    settings = Settings(data_dir=tmp_path / "data", config_dir=tmp_path / "cfg", hosts_file=hosts)
    tc = toolchain()
    assert isinstance(build_pool(settings, tc), LocalPool)  # no file: the local pool
    hosts.write_text(
        '[local]\nslots = 2\n\n[hosts.a]\naddress = "10.0.0.5"\nuser = "lab"\nslots = 3\n'
        'devices = 1\n\n[dask]\nscheduler = "tcp://10.0.0.9:8786"\nslots = 8\n'
    )
    pool = build_pool(settings, tc)
    assert isinstance(pool, WorkerPool) and pool.slots == 2 + 3 + 8
    kinds = [type(e) for e in pool.executors]
    assert kinds == [LocalExecutor, SshExecutor, DaskExecutor]
    assert pool.executors[1].devices == 1
    # remote only
    assert [e.name for e in build_pool(settings, tc, local_slots=0).executors] == ["a", "dask"]
    # a password the secrets store does not hold is a configuration error naming the host
    hosts.write_text('[hosts.b]\naddress = "h"\nuser = "u"\npassword_secret = "b_pw"\n')
    with pytest.raises(ConfigError, match=r"hosts\.b\.password_secret.*b_pw"):
        build_pool(settings, tc)
    hosts.write_text('[dask]\nscheduler = "tcp://x:1"\nssh_hosts = ["a"]\n')
    with pytest.raises(ConfigError, match="exactly one of scheduler or ssh_hosts"):
        load_workers(hosts)
