"""`justkernel check` tells what is present and what is missing, as a table and as JSON."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from justkernel.capabilities import suite_needs
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
    """This machine runs the whole suite, so everything the suite needs is present here."""
    result = _check(tmp_path, "--json")
    assert result.returncode == 0, result.stderr
    caps = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    assert {*suite_needs(), "cann", "ssh hosts"} <= caps.keys()
    for name in suite_needs():
        assert caps[name]["present"] is True, caps[name]
    for name in ("gcc", "valgrind", "git"):
        assert caps[name]["detail"].startswith(f"{shutil.which(name)}: "), caps[name]
    assert caps["bubblewrap"]["detail"].startswith(f"{shutil.which('bwrap')}: ")
    assert caps["sandbox"]["detail"].startswith("prlimit + "), caps["sandbox"]
    assert "bwrap" in caps["sandbox"]["detail"]
    for cap in caps.values():  # a missing capability says how to fix it; a present one has none
        assert bool(cap["fix"]) is not cap["present"], cap
    assert "none configured" in caps["ssh hosts"]["detail"]


def test_check_reports_a_missing_tool_with_its_fix(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    result = _check(tmp_path, "--json", PATH=str(bare))
    assert result.returncode == 0, result.stderr
    caps = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    assert caps["valgrind"] == {
        "name": "valgrind",
        "present": False,
        "detail": "valgrind not found on PATH",
        "needed_for": "cycle simulation (cachegrind)",
        "fix": "apt-get install valgrind",
    }
    assert caps["sandbox"]["present"] is False
    assert "bwrap" in caps["sandbox"]["detail"]


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
