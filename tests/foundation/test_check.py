"""`justkernel check` tells what is present and what is missing, as a table and as JSON."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.server import server_env


def _check(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "justkernel.cli.main", "check", *args],
        env=server_env(tmp_path / "data", tmp_path / "config", **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_check_json_matches_the_machine(tmp_path: Path) -> None:
    result = _check(tmp_path, "--json")
    assert result.returncode == 0, result.stderr
    caps = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    assert {
        "gcc",
        "valgrind",
        "bubblewrap",
        "sandbox",
        "chromium",
        "cann",
        "ssh hosts",
    } <= caps.keys()
    assert caps["gcc"]["present"] == (shutil.which("gcc") is not None)
    assert caps["valgrind"]["present"] == (shutil.which("valgrind") is not None)
    assert caps["bubblewrap"]["present"] == (shutil.which("bwrap") is not None)
    if caps["bubblewrap"]["present"] and caps["gcc"]["present"]:
        assert caps["sandbox"]["present"], caps["sandbox"]
    if not caps["cann"]["present"]:
        assert caps["cann"]["fix"]
    assert "none configured" in caps["ssh hosts"]["detail"]


def test_check_probes_configured_hosts(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        open_port = listener.getsockname()[1]
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            closed_port = closed.getsockname()[1]
        hosts = tmp_path / "hosts.toml"
        hosts.write_text(
            f'[hosts.up]\naddress = "127.0.0.1"\nport = {open_port}\nuser = "lab"\n'
            f'[hosts.down]\naddress = "127.0.0.1"\nport = {closed_port}\nuser = "lab"\n'
        )
        result = _check(tmp_path, "--json", JUSTKERNEL_HOSTS_FILE=str(hosts))
    caps = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    assert caps["host up"]["present"] is True
    assert caps["host down"]["present"] is False
    assert "refused" in caps["host down"]["detail"].lower()


def test_check_reports_a_bad_hosts_file_by_key(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[hosts.x]\naddress = "h"\nuser = "u"\nslots = 99\n')
    result = _check(tmp_path, "--json", JUSTKERNEL_HOSTS_FILE=str(hosts))
    caps = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    assert "hosts.x.slots" in caps["ssh hosts"]["detail"]


def test_check_table_is_readable(tmp_path: Path) -> None:
    result = _check(tmp_path, COLUMNS="200")
    assert result.returncode == 0
    assert "capability" in result.stdout and "gcc" in result.stdout
