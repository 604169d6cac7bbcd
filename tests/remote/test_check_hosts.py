"""`justkernel check` probes each configured host: reachable, auth ok, toolchain found (at
which version), free disk; each failure names the host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from justkernel.toolchains.cpu import CpuToolchain
from tests.remote.sshd import SshServer, free_port, keygen, open_folder

pytestmark = pytest.mark.timeout(180)


def toml_host(name: str, server: SshServer, scratch: str, **extra: object) -> str:
    fields: dict[str, object] = {
        "address": "127.0.0.1",
        "port": server.port,
        "user": "root",
        "key_file": str(server.user_key),
        "known_hosts_file": str(server.known_hosts()),
        "scratch_dir": scratch,
        "worker_command": f"{sys.executable} -m justkernel.cli.main",
        **extra,
    }
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items())
    return f"[hosts.{name}]\n{body}\n"


def test_check_probes_reachability_auth_toolchain_and_disk(
    sshd: SshServer, shared_scratch: str, full_scratch: str, tmp_path: Path
) -> None:
    stranger = keygen(open_folder("jk-key-") / "stranger")
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        toml_host("good", sshd, shared_scratch)
        + toml_host("badkey", sshd, shared_scratch, key_file=str(stranger))
        + toml_host("full", sshd, full_scratch, min_free_mb=64)
        + toml_host("gone", sshd, shared_scratch, port=free_port())
    )
    done = subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "check", "--json"],
        env={
            "PATH": "/usr/bin:/bin:/usr/sbin",
            "HOME": str(tmp_path),
            "JUSTKERNEL_HOSTS_FILE": str(hosts),
            "JUSTKERNEL_DATA_DIR": str(tmp_path / "data"),
            "JUSTKERNEL_CONFIG_DIR": str(tmp_path / "config"),
        },
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    caps = {c["name"]: c for c in json.loads(done.stdout)["capabilities"]}

    version = CpuToolchain().version
    for step in ("", " auth", " toolchain", " disk"):
        assert caps[f"host good{step}"]["present"], caps[f"host good{step}"]
    assert f"cpu {version} (same as this lab)" in caps["host good toolchain"]["detail"]
    assert "MiB free" in caps["host good disk"]["detail"]

    assert caps["host badkey"]["present"]  # reachable
    bad = caps["host badkey auth"]
    assert not bad["present"] and "authentication failed for root@127.0.0.1" in bad["detail"]
    assert bad["detail"].startswith("host badkey: ") and bad["fix"]
    assert "not probed" in caps["host badkey toolchain"]["detail"]

    assert caps["host full toolchain"]["present"]
    disk = caps["host full disk"]
    assert not disk["present"] and "MiB free, min_free_mb is 64" in disk["detail"]
    assert disk["detail"].startswith("host full: ")

    assert not caps["host gone"]["present"] and "refused" in caps["host gone"]["detail"].lower()
    assert not caps["host gone auth"]["present"]
