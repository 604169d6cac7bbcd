"""The sandbox shows a kernel nothing of the lab: no token, no key, no host folder.

Attack (issue 11, finding 2): a kernel read the lab's full environment from /proc/1/environ
(bwrap's init inherited it), host paths from /proc/1/cmdline and /proc/self/mountinfo, and
printed them into its stderr, which agents read and which lands in events and exports. The
kernel here (`hostile_kernels/dump_proc`) dumps all of that, through the real CPU toolchain
and sandbox, into a file in its output folder (raw, as the kernel saw it) and into stderr
(as the lab stores it). The local judge the lab starts must not inherit its secrets either.
"""

from __future__ import annotations

import platform
import secrets
import shutil
from pathlib import Path

import pytest

from justkernel.core.receipts import JobKind, Receipt, Status
from justkernel.evaluation.connect import connect_judge
from justkernel.evaluation.local_judge_files import read_server_info
from justkernel.settings.config import Settings
from justkernel.settings.secrets import SecretsStore
from justkernel.toolchains import CpuLimits
from justkernel.toolchains.sandbox import SandboxLimits
from tests.support.judge import new_judge_dir
from tests.support.labs import open_folder
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    fresh_dir,
    make_project,
    packs,
    require_tools,
    shared_root,
    spec_for,
    toolchain,
)

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="raw x86_64 syscalls"),
]

REPO = Path(__file__).resolve().parents[2]
LIMITS = CpuLimits(case=SandboxLimits(wall_seconds=20, cpu_seconds=5, processes=3))


@pytest.fixture
def lab_secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The lab's own secrets, as a real lab holds them in its environment."""
    values = {
        "JUSTKERNEL_API_TOKEN": f"jk-api-{secrets.token_hex(16)}",
        "OPENAI_API_KEY": f"sk-{secrets.token_hex(20)}",
        "DEEPSEEK_API_KEY": f"sk-ds-{secrets.token_hex(20)}",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


async def run_dump(say: str = "nothing") -> tuple[Receipt, Path]:
    require_tools()
    tc = toolchain(limits=LIMITS, scan_syscalls=False)
    pack_set = await packs(JobKind.PROBE)
    src = make_project(hostile="dump_proc", replace={"@JK_SAY@": say})
    spec = spec_for(tc, src, pack_set, JobKind.PROBE, [SMALL_CASE])
    work = fresh_dir("dump-proc") / "work"
    return await tc.run(spec, src, pack_set, work, slot=0), work


def stored_stderr(receipt: Receipt, work: Path) -> bytes:
    (ref,) = [log for log in receipt.cases[0].logs if log.name.endswith(".stderr")]
    return (work / "logs" / ref.sha256).read_bytes()


def section(dump: bytes, name: str) -> bytes:
    """What the kernel dumped under one `== <name>` header."""
    return dump.split(f"\n== {name}\n".encode(), 1)[1].split(b"\n== ", 1)[0]


def host_paths(work: Path) -> list[str]:
    """Host folders of the lab a kernel must not learn: data (packs, jobs), repo, cwd."""
    return [str(shared_root()), str(work), str(REPO), str(Path.cwd())]


async def test_a_kernel_sees_no_token_key_or_host_path(lab_secrets: dict[str, str]) -> None:
    r, work = await run_dump()
    assert r.status is Status.INCORRECT, r.detail  # it ran, and wrote no product
    dump = (work / "cases" / SMALL_CASE / "dump.txt").read_bytes()
    # it did read what it tried to: pid 1's environment, the mount table, its own command
    assert b"PATH=" in section(dump, "file /proc/1/environ"), dump[:2000]
    assert b" /sandbox/out " in dump and b"/sandbox/bin/harness" in dump
    stderr = stored_stderr(r, work)
    assert b"== file /proc/self/mountinfo" in stderr and b"== end" in stderr
    for text in (dump, stderr):
        for name, value in lab_secrets.items():
            assert value.encode() not in text, f"{name} is visible inside the sandbox"
        for path in host_paths(work):
            assert path.encode() not in text, f"host path {path} is visible inside the sandbox"
        assert b"***" not in text  # nothing had to be redacted: the sandbox never saw it


async def test_a_token_a_kernel_prints_is_redacted_in_the_stored_log(
    lab_secrets: dict[str, str],
) -> None:
    # However a kernel learned it, the lab's own token never reaches a stored log.
    token = lab_secrets["JUSTKERNEL_API_TOKEN"]
    r, work = await run_dump(say=f"token={token};")
    assert r.status is Status.INCORRECT, r.detail
    dump = (work / "cases" / SMALL_CASE / "dump.txt").read_bytes()
    assert f"said: token={token};".encode() in dump  # the kernel did print it
    stderr = stored_stderr(r, work)
    assert token.encode() not in stderr
    assert b"said: token=***;" in stderr
    assert token not in r.model_dump_json()


async def test_the_local_judge_does_not_inherit_the_labs_secrets(
    lab_secrets: dict[str, str],
) -> None:
    folder = open_folder("jk-judge-env-")
    settings = Settings(
        data_dir=folder / "data", config_dir=folder / "config", judge_dir=new_judge_dir(folder)
    )
    try:
        async with connect_judge(settings, SecretsStore(settings.config_dir)) as client:
            assert client is not None
            info = read_server_info(settings.resolved_judge_dir)
            assert info is not None
            with open(f"/proc/{info['pid']}/environ", "rb") as f:  # noqa: ASYNC230 - procfs
                environ = f.read()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    names = {item.split(b"=", 1)[0].decode() for item in environ.split(b"\0") if item}
    assert "PATH" in names and "JUSTKERNEL_DATA_DIR" in names  # what it needs, it has
    for name, value in lab_secrets.items():
        assert name not in names and value.encode() not in environ, name
