"""The self-contained worker (`resources/simulator/`) for hosts without the package.

With `bundle_python` set in hosts.toml the lab ships its own code to the host, once per
version: the package's files under `lib/justkernel/`, the operator definitions under
`lib/justkernel/resources/operators/` and the launcher `jk_worker.py`, into
`<scratch>/bundles/<hash>/` (marker `<hash>.complete` written last), and starts the worker with
`<bundle_python> <bundle>/jk_worker.py serve ...`. The host then runs exactly the lab's code;
it needs Python 3.11+ with numpy and pydantic 2, and the toolchain's tools. The ascendc-cpu
library (`resources/ascendc_cpu/`: headers, harness, SoC file) ships too, so that toolchain's
version on the host, which hashes those files, is the lab's.
"""

from __future__ import annotations

import functools
import hashlib
import io
import posixpath
import shlex
import tarfile
from pathlib import Path

import asyncssh

import justkernel
from justkernel.paths import resources_dir
from justkernel.workers.executor import HostUnavailable
from justkernel.workers.hosts import HostConfig
from justkernel.workers.job_files import COMPLETE_SUFFIX


def _files() -> dict[str, bytes]:
    package = Path(justkernel.__file__).resolve().parent
    files = {}
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package)
        if not path.is_file() or "__pycache__" in rel.parts or rel.parts[0] == "resources":
            continue
        files[f"lib/justkernel/{rel.as_posix()}"] = path.read_bytes()
    for part in ("operators", "ascendc_cpu"):
        folder = resources_dir() / part
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(folder).as_posix()
                files[f"lib/justkernel/resources/{part}/{rel}"] = path.read_bytes()
    files["jk_worker.py"] = (resources_dir() / "simulator" / "jk_worker.py").read_bytes()
    return files


@functools.cache
def bundle() -> tuple[str, bytes]:
    """(content hash, tar bytes) of the worker bundle; built once per lab process."""
    files = _files()
    digest = hashlib.sha256()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return digest.hexdigest()[:16], buffer.getvalue()


def package_command(host: HostConfig) -> str:
    """The worker command prefix on a host that has the package installed."""
    return f"{host.worker_command} worker"


async def worker_command(host: HostConfig, conn: asyncssh.SSHClientConnection) -> str:
    """The command prefix that starts a worker there (`... serve`, `... info`): the installed
    package, or the bundle, uploaded first if this version is not there yet."""
    if host.bundle_python is None:
        return package_command(host)
    digest, data = bundle()
    folder = posixpath.join(host.scratch_dir, "bundles")
    final = posixpath.join(folder, digest)
    stage = posixpath.join(folder, f".upload-{digest}")
    q = shlex.quote
    script = (
        f"set -e; test -e {q(final + COMPLETE_SUFFIX)} && exit 0; "
        f"mkdir -p {q(stage)}; tar -x -C {q(stage)}; "
        f"test -e {q(final)} || mv {q(stage)} {q(final)}; rm -rf {q(stage)}; "
        f"echo complete > {q(final + COMPLETE_SUFFIX)}"
    )
    result = await conn.run(script, input=data, encoding=None, check=False)
    if result.exit_status != 0:
        error = (result.stderr or b"").decode(errors="replace").strip()
        raise HostUnavailable(host.name, f"cannot unpack the worker bundle in {folder}: {error}")
    return f"{host.bundle_python} {q(posixpath.join(final, 'jk_worker.py'))}"
