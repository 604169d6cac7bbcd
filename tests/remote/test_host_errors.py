"""A host that cannot take the job (wrong key, a host key the strict policy does not trust, a
full scratch disk, a wrong worker command) says so clearly, naming the host; the job runs
elsewhere, and nothing is lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from justkernel.core.receipts import Status
from justkernel.workers.hosts import HostConfig
from justkernel.workers.local_executor import LocalExecutor
from justkernel.workers.ssh.executor import SshExecutor
from tests.remote.conftest import FAST, evaluator_on, host_for
from tests.remote.sshd import SshServer, keygen, open_folder
from tests.workers.test_evaluator import unique_variant
from tests.workers.test_evaluator_shared import SMALL_CASE, require_tools, toolchain

pytestmark = pytest.mark.timeout(180)


def uploads_left(scratch: Path) -> list[str]:
    return [p.name for p in (scratch / "packs").iterdir()]


def wrong_key(server: SshServer, scratch: str, _full: str) -> HostConfig:
    other = keygen(open_folder("jk-key-") / "not_authorized")
    return host_for(server, "wrongkey", scratch, key_file=other)


def unknown_host_key(server: SshServer, scratch: str, _full: str) -> HostConfig:
    empty = open_folder("jk-kh-") / "known_hosts"
    empty.write_text("")
    return host_for(server, "stranger", scratch, known_hosts_file=empty)


def full_disk(server: SshServer, _scratch: str, full: str) -> HostConfig:
    return host_for(server, "fullhost", full, min_free_mb=0)


def wrong_command(server: SshServer, scratch: str, _full: str) -> HostConfig:
    return host_for(server, "nocli", scratch, worker_command="/nonexistent/justkernel")


CASES: dict[str, tuple[Callable[[SshServer, str, str], HostConfig], str]] = {
    "wrong key": (wrong_key, "authentication failed for root@127.0.0.1"),
    "unknown host key (strict)": (unknown_host_key, "not trusted under the strict"),
    "full disk": (full_disk, "is full"),
    "wrong worker command": (wrong_command, "the worker did not start"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_host_that_cannot_take_the_job_names_itself_and_the_job_runs_elsewhere(
    case: str, sshd: SshServer, shared_scratch: str, full_scratch: str
) -> None:
    require_tools()
    make, expected = CASES[case]
    config = make(sshd, shared_scratch, full_scratch)
    bad = SshExecutor(config, timing=FAST)
    ev = evaluator_on([bad, LocalExecutor(toolchain(), slots=1)])  # the bad host is tried first
    lines: list[str] = []
    try:
        receipt = await ev.evaluate(
            unique_variant(), kind="probe", case_ids=[SMALL_CASE], progress=lines.append
        )
    finally:
        await ev.pool.close()
    # no job lost: it ran here, once
    assert receipt.status is Status.PROBE_PASSED and receipt.executor.worker == "local"
    assert (ev.pool.stats.completed, ev.pool.stats.failed) == (1, 0)
    # a clear error naming the host, on the job's log and on the host's state
    requeued = [line for line in lines if line.startswith("re-queued: ")]
    assert requeued and requeued[0].startswith(f"re-queued: host {config.name}: "), lines
    assert expected in requeued[0], requeued[0]
    assert not bad.state.up and expected in (bad.state.cause or "")
    if case == "full disk":
        assert "MiB free" in requeued[0] and "input pack" in requeued[0]
        assert not uploads_left(Path(full_scratch))  # no partial pack left behind
