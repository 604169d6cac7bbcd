"""A real OpenSSH server on 127.0.0.1 for the remote worker tests (Debian's openssh-server).

Each server gets its own host key, an authorized user key, a free port and a config that only
this test session uses; it runs as root (the lab logs in as root with the generated key). The
server can be killed (listener and every per-connection sshd, not the worker processes they
started, as when the daemon crashes or the host reboots its network) and started again on the
same port with the same host key.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def unavailable_reason() -> str | None:
    if not os.access(SSHD, os.X_OK):
        return "openssh-server is not installed (/usr/sbin/sshd)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is not installed"
    if os.geteuid() != 0:
        return "the loopback sshd fixture runs as root"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def open_folder(prefix: str) -> Path:
    """A 0755 folder under /tmp (the sandbox uid must traverse scratch and data folders),
    removed when the test process ends."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    atexit.register(shutil.rmtree, folder, True)
    return folder


class SshServer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.host_key = keygen(root / "host_key")
        self.user_key = keygen(root / "user_key")
        (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
        self.config = root / "sshd_config"
        self.config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.host_key}",
                    f"AuthorizedKeysFile {root / 'authorized_keys'}",
                    f"PidFile {root / 'sshd.pid'}",
                    "StrictModes no",
                    "UsePAM no",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "Subsystem sftp internal-sftp",
                    "MaxSessions 64",
                    "MaxStartups 64",
                    "LogLevel ERROR",
                    "",
                ]
            )
        )
        self.process: subprocess.Popen[bytes] | None = None

    def known_hosts(self, path: Path | None = None) -> Path:
        """A known_hosts file that trusts this server's host key."""
        path = path or self.root / "known_hosts"
        key = (self.root / "host_key.pub").read_text().split()
        path.write_text(f"[127.0.0.1]:{self.port} {key[0]} {key[1]}\n")
        return path

    def start(self) -> None:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / "sshd.log", "ab"),  # noqa: SIM115
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.root / 'sshd.log').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("sshd did not answer in 20 s")

    def _sshd_tree(self) -> list[int]:
        """The listener and every per-connection sshd below it (not their other children)."""
        if self.process is None:
            return []
        parents: dict[int, int] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
                exe = os.readlink(f"/proc/{name}/exe")
            except OSError:
                continue
            if exe.startswith(SSHD):
                parents[int(name)] = int(stat.rsplit(")", 1)[1].split()[1])
        tree = {self.process.pid}
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        return sorted(tree)

    def kill(self) -> None:
        """SIGKILL the daemon and its connections: clients see the connection drop."""
        for pid in self._sshd_tree():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        self.kill()
