"""The sandbox API around the hostile cases: statuses, the sandbox's view, capture, errors."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from justkernel.toolchains.sandbox import (
    VIOLATION_EXIT_CODE,
    SandboxLimits,
    SandboxSetupError,
    SandboxStatus,
    SandboxUnavailable,
    run_sandboxed,
    sandbox_capabilities,
)
from justkernel.toolchains.sandbox import seccomp as sandbox_seccomp
from justkernel.toolchains.sandbox.command import DEFAULT_ENV

pytestmark = pytest.mark.timeout(60)
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the uid pool is used only as root")


async def sh(work: Path, script: str, **kw: object) -> object:
    return await run_sandboxed(["/bin/sh", "-c", script], rw_dir=work / "out", **kw)  # type: ignore[arg-type]


async def test_exit_codes_map_to_ok_and_nonzero_exit(work: Path) -> None:
    ok = await sh(work, "true")
    assert (ok.status, ok.exit_code, ok.signal) == (SandboxStatus.OK, 0, None)
    assert ok.ok and ok.cpu_seconds is not None
    bad = await sh(work, "exit 7")
    assert (bad.status, bad.exit_code) == (SandboxStatus.NONZERO_EXIT, 7)
    reported = await sh(work, f"exit {VIOLATION_EXIT_CODE}")
    assert reported.status is SandboxStatus.SANDBOX_VIOLATION
    aborted = await sh(work, "kill -ABRT $$")
    assert (aborted.status, aborted.signal_name) == (SandboxStatus.CRASHED, "SIGABRT")


async def test_environment_is_fixed_and_host_free(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JK_HOST_SECRET", "do-not-leak")
    r = await run_sandboxed(["/usr/bin/env"], rw_dir=work / "out", env={"OMP_NUM_THREADS": "1"})
    seen = dict(line.split("=", 1) for line in r.stdout.text.splitlines())
    assert seen == {**DEFAULT_ENV, "OMP_NUM_THREADS": "1", "PWD": "/sandbox"}  # PWD: bwrap


async def test_the_sandbox_sees_a_minimal_fixed_world(work: Path) -> None:
    script = (
        "id -u; pwd; hostname; ls /; ls /sandbox; grep -E '^(Cap|NoNewPrivs)' /proc/self/status"
    )
    r = await sh(work, script)
    lines = r.stdout.text.splitlines()
    assert int(lines[0]) != 0
    assert lines[1:3] == ["/sandbox", "sandbox"]
    top = set(lines[3 : lines.index("out")])
    system = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr"}
    assert top <= system | {"dev", "proc", "sandbox", "tmp"}
    assert "etc" not in top and "root" not in top and "home" not in top
    assert "CapEff:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines


async def test_output_is_capped_keeping_head_and_tail(work: Path) -> None:
    r = await sh(work, "seq 1 100000", limits=SandboxLimits(capture_bytes=1000))
    assert r.stdout.truncated
    assert r.stdout.total_bytes == len("".join(f"{i}\n" for i in range(1, 100001)))
    assert r.stdout.text.startswith("1\n2\n3\n")
    assert r.stdout.text.endswith("99999\n100000\n")
    assert re.search(r"\[\.\.\. \d+ bytes omitted \.\.\.\]", r.stdout.text)
    assert len(r.stdout.text) < 1100


async def test_command_is_recorded_for_the_receipt(work: Path) -> None:
    r = await run_sandboxed(
        ["/bin/true"], ro_binds={"in": work / "in"}, rw_dir=work / "out", cwd="/sandbox/in"
    )
    cmd = " ".join(r.command)
    for part in ("prlimit", "--nproc=", "bwrap", "--unshare-all", "--disable-userns"):
        assert part in cmd
    # bound from the run's staging folder, never from where the caller keeps them
    staged = r"/\S+/justkernel-sandbox-\d+/run-\d+-\w+"
    assert re.search(rf"--ro-bind {staged}/ro/0-in /sandbox/in ", cmd), cmd
    assert re.search(rf"--bind {staged}/out /sandbox/out ", cmd), cmd
    assert str(work) not in cmd
    assert r.command[-2:] == ["--", "/bin/true"]
    assert r.sandbox_argv == ["/bin/true"]


@root_only
async def test_concurrent_runs_get_their_own_uid(work: Path) -> None:
    outs = []
    for i in range(3):
        (work / f"out{i}").mkdir(mode=0o755)
        outs.append(work / f"out{i}")
    results = await asyncio.gather(
        *(run_sandboxed(["/bin/sh", "-c", "sleep 0.2"], rw_dir=o) for o in outs)
    )
    assert all(r.ok for r in results)
    assert len({r.sandbox_uid for r in results}) == 3


async def test_folders_under_a_private_parent_are_staged_and_work(work: Path) -> None:
    # /root and `mktemp -d` folders are 0700: the sandbox uid could not traverse them
    private = work / "private"
    (private / "in").mkdir(parents=True)
    (private / "out").mkdir()
    (private / "in" / "data.txt").write_text("private input\n")
    (private / "in" / "data.txt").chmod(0o600)
    (private / "out" / "kept.txt").write_text("from before\n")
    private.chmod(0o700)
    r = await run_sandboxed(
        ["/bin/sh", "-c", "cat /sandbox/in/data.txt; cat kept.txt > again.txt"],
        ro_binds={"in": private / "in"},
        rw_dir=private / "out",
        cwd="/sandbox/out",
    )
    assert r.ok, r.stderr.text
    assert r.stdout.text == "private input\n"
    assert sorted(p.name for p in (private / "out").iterdir()) == ["again.txt", "kept.txt"]
    assert (private / "out" / "again.txt").read_text() == "from before\n"
    assert (private / "out" / "again.txt").stat().st_uid == os.getuid()  # handed back


async def test_bad_binds_are_setup_errors(work: Path) -> None:
    for dest in ("out", "/sandbox/out/x", "../etc", "/etc", "/sandbox"):
        with pytest.raises(SandboxSetupError):
            await run_sandboxed(["/bin/true"], ro_binds={dest: work / "in"}, rw_dir=work / "out")
    with pytest.raises(SandboxSetupError, match="does not exist"):
        await run_sandboxed(["/bin/true"], ro_binds={"in": work / "nope"}, rw_dir=work / "out")
    with pytest.raises(SandboxSetupError, match="inside the output"):
        await run_sandboxed(["/bin/true"], ro_binds={"in": work / "out"}, rw_dir=work / "out")


async def test_caller_mistakes_are_setup_errors_not_candidate_failures(work: Path) -> None:
    with pytest.raises(SandboxSetupError, match="program not found"):
        await run_sandboxed(
            ["/sandbox/in/not-built"], ro_binds={"in": work / "in"}, rw_dir=work / "out"
        )
    with pytest.raises(SandboxSetupError, match="program not found"):
        await run_sandboxed(["no-such-tool"], rw_dir=work / "out")
    with pytest.raises(SandboxSetupError, match="working folder"):
        await run_sandboxed(["/bin/true"], rw_dir=work / "out", cwd="/sandbox/out/missing")
    found = await run_sandboxed(["echo", "resolved"], rw_dir=work / "out", cwd="/tmp")
    assert (found.status, found.exit_code, found.stdout.text) == (  # resolved on PATH, and ran
        SandboxStatus.OK,
        0,
        "resolved\n",
    )
    assert found.sandbox_argv == ["echo", "resolved"]


async def test_missing_tools_refuse_to_run(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(work / "in"))  # an empty folder: no bwrap, no prlimit
    with pytest.raises(SandboxUnavailable, match="bwrap"):
        await run_sandboxed(["/bin/true"], rw_dir=work / "out")
    assert sandbox_capabilities()["usable"] is False


def test_capabilities_report_a_working_sandbox(sandbox_root: Path) -> None:
    caps = sandbox_capabilities()
    assert caps["usable"] is True, caps["error"]
    assert caps["bwrap"] and caps["prlimit"] and caps["user_namespaces"] is True


def test_seccomp_tables_match_the_system_headers() -> None:
    headers = {
        "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        "aarch64": Path("/usr/include/asm-generic/unistd.h"),
    }
    checked = 0
    for column, (arch, header) in enumerate(headers.items()):
        if not header.exists():
            continue
        text = header.read_text()
        for name, numbers in sandbox_seccomp.DENIED_SYSCALLS.items():
            m = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)", text)
            assert (int(m.group(1)) if m else None) == numbers[column], (arch, name)
        checked += 1
    if not checked:
        pytest.skip("no kernel headers installed")
    assert sandbox_seccomp.deny_filter("x86_64") and sandbox_seccomp.deny_filter("aarch64")
    assert sandbox_seccomp.deny_filter("riscv64") is None


async def test_a_finished_run_never_kills_a_sandbox_given_its_namespace_number(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel hands a freed pid namespace's number to the next namespace within
    milliseconds. A run that looked for its leftovers by that number after its namespace had
    died killed the next sandbox (seen as `killed by SIGKILL` cases under load). The cleanup
    here waits until another sandbox is running before it looks: that one must survive."""
    from justkernel.toolchains.sandbox import host as sandbox_host

    real_cleanup = sandbox_host.ensure_gone
    (work / "other").mkdir(mode=0o755)
    other: list[asyncio.Task[object]] = []
    marker = "3.25"  # `sleep 3.25`: the other sandbox's process, found in /proc

    def other_is_running() -> bool:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes() == f"sleep\0{marker}\0".encode():
                    return True
            except OSError:
                continue
        return False

    async def cleanup_after_another_sandbox_started(ns: int | None, uid: int | None) -> None:
        if not other:  # the first run's cleanup: let its namespace go, then start the next one
            await asyncio.sleep(0.5)
            other.append(
                asyncio.create_task(
                    run_sandboxed(
                        ["/bin/sh", "-c", f"echo up; sleep {marker}"], rw_dir=work / "other"
                    )
                )
            )
            for _ in range(600):
                if other_is_running():
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the second sandbox never started")
        await real_cleanup(ns, uid)

    monkeypatch.setattr(sandbox_host, "ensure_gone", cleanup_after_another_sandbox_started)
    first = await sh(work, "true")
    second = await other[0]
    assert first.status is SandboxStatus.OK
    assert (second.status, second.signal_name, second.stdout.text) == (
        SandboxStatus.OK,
        None,
        "up\n",
    )
