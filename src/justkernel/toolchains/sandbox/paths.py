"""The mapping between sandbox paths and host paths for one run, checked before it starts.

Checked up front so that a caller's mistake (a missing program, a bad working folder, an
input bound inside the output) is a `SandboxSetupError`, not a failure charged to the
candidate: once bwrap runs, its own "execvp ... No such file" looks like any exit code 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from justkernel.toolchains.sandbox.types import SANDBOX_OUT, SANDBOX_ROOT, SandboxSetupError

# Host folders that appear at the same path inside (read-only), see sandbox.command.
_SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Folders that always exist inside although nothing is bound there.
_ALWAYS_DIRS = {PurePosixPath(p) for p in ("/", "/tmp", SANDBOX_ROOT)}


def sandbox_dest(dest: str) -> str:
    """A bind destination as an absolute path under /sandbox ("in" -> /sandbox/in)."""
    p = PurePosixPath(dest if dest.startswith("/") else f"{SANDBOX_ROOT}/{dest}")
    root, out = PurePosixPath(SANDBOX_ROOT), PurePosixPath(SANDBOX_OUT)
    if ".." in p.parts or root not in p.parents or p == out or out in p.parents:
        raise SandboxSetupError(f"read-only bind must be a path under {SANDBOX_ROOT}/: {dest}")
    return str(p)


@dataclass(frozen=True)
class SandboxView:
    """Read-only binds (sandbox path -> host path) and the output folder of one run."""

    binds: dict[str, Path]
    rw_dir: Path

    @classmethod
    def of(cls, ro_binds: Mapping[str, Path] | None, rw_dir: Path) -> SandboxView:
        rw = Path(os.path.abspath(rw_dir))
        binds = {sandbox_dest(k): Path(os.path.abspath(v)) for k, v in (ro_binds or {}).items()}
        for host in binds.values():
            if host == rw or rw in host.parents:
                raise SandboxSetupError(f"read-only bind {host} lies inside the output {rw}")
        return cls(binds, rw)

    def host_path(self, path: str) -> Path | None:
        """The host path behind an absolute sandbox path, if it has one."""
        p = PurePosixPath(path)
        mounts = {PurePosixPath(d): h for d, h in self.binds.items()}
        mounts[PurePosixPath(SANDBOX_OUT)] = self.rw_dir
        for dest, host in mounts.items():
            if p == dest or dest in p.parents:
                return host.joinpath(*p.relative_to(dest).parts)
        if len(p.parts) > 1 and p.parts[1] in _SYSTEM:
            return Path(p)
        return None

    def check(self, argv: Sequence[str], cwd: str, search_path: str) -> None:
        """Raise SandboxSetupError unless `cwd` is a folder and `argv[0]` a file inside."""
        c = PurePosixPath(cwd)
        host_cwd = self.host_path(cwd)
        if not c.is_absolute() or (
            c not in _ALWAYS_DIRS and (host_cwd is None or not host_cwd.is_dir())
        ):
            raise SandboxSetupError(f"working folder does not exist in the sandbox: {cwd}")
        prog = argv[0]
        if "/" in prog:
            places = [str(c / prog)]
        else:
            places = [f"{d}/{prog}" for d in search_path.split(":") if d.startswith("/")]
        for place in places:
            host = self.host_path(place)
            if host is not None and host.is_file():
                return
        raise SandboxSetupError(f"program not found in the sandbox: {prog}")


def open_dir(folder: Path) -> Path:
    """Create `folder` readable and traversable by the sandbox uid, whatever the umask."""
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o755)
    return folder
