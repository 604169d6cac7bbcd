"""SSH to one worker host: connect with the configured trust and credentials, and move files.

Every failure becomes a `HostUnavailable` whose message names the host and says what to fix:
wrong key or password, a host key that the known-hosts policy does not trust, a refused or
silent port, a scratch disk that cannot hold the upload.

Known-hosts policies: `strict` trusts only keys already in the configured known_hosts file;
`accept-new` trusts a host seen for the first time and records its key there (what OpenSSH's
`StrictHostKeyChecking=accept-new` does), but still refuses a key that changed.

Input packs are content-addressed on the host (`<scratch>/packs/<hash>/`) with a marker file
written last, so each crosses the wire once per host, and a half-finished upload is never used.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import uuid
from pathlib import Path

import asyncssh

from justkernel.settings.secrets import Secret
from justkernel.workers.executor import HostUnavailable
from justkernel.workers.hosts import HostConfig
from justkernel.workers.job_files import COMPLETE_SUFFIX

MiB = 1 << 20


def known_hosts_path(host: HostConfig) -> Path:
    return (host.known_hosts_file or Path("~/.ssh/known_hosts")).expanduser()


class _TrustOnFirstUse(asyncssh.SSHClient):
    """`accept-new`: record the key of a host the known_hosts file does not mention yet."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        known = asyncssh.read_known_hosts(str(self._path))
        trusted = known.match(host, addr, port)[0]
        if trusted:  # the host is known with another key: that is not "new"
            return False
        pattern = host if port == 22 else f"[{host}]:{port}"
        line = f"{pattern} {key.export_public_key().decode().strip()}\n"
        with self._path.open("a", encoding="utf-8") as f:
            f.write(line)
        return True


def _credentials(host: HostConfig, password: Secret | None) -> str:
    if host.key_file is not None:
        return f"key {host.key_file}"
    return "password" if password is not None else "default keys"


def describe(host: HostConfig, exc: BaseException, password: Secret | None = None) -> str:
    """One line saying what went wrong, for the host's state and `justkernel check`."""
    where = f"{host.user}@{host.address}:{host.port}"
    if isinstance(exc, asyncssh.PermissionDenied):
        return f"authentication failed for {where} with {_credentials(host, password)}"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return (
            f"host key of {host.address}:{host.port} not trusted under the {host.known_hosts} "
            f"known-hosts policy ({known_hosts_path(host)}): {exc.reason}"
        )
    if isinstance(exc, asyncssh.KeyImportError | FileNotFoundError | PermissionError):
        return f"cannot use key file {host.key_file}: {exc}"
    if isinstance(exc, asyncssh.DisconnectError):
        return f"disconnected by {where}: {exc.reason}"
    if isinstance(exc, TimeoutError):
        return f"no answer from {where} in time"
    if isinstance(exc, OSError):
        return f"cannot connect to {where}: {exc.strerror or exc}"
    return f"{where}: {type(exc).__name__}: {exc}"


async def connect(
    host: HostConfig,
    password: Secret | None = None,
    *,
    connect_seconds: float = 15.0,
    keepalive: float = 5.0,
) -> asyncssh.SSHClientConnection:
    """An authenticated connection, or HostUnavailable naming the host and the reason."""
    known = known_hosts_path(host)
    factory = None
    if host.known_hosts == "accept-new":
        known.parent.mkdir(parents=True, exist_ok=True)
        known.touch(exist_ok=True)
        factory = lambda: _TrustOnFirstUse(known)  # noqa: E731
    elif not known.is_file():
        raise HostUnavailable(
            host.name,
            f"known_hosts file {known} does not exist; the strict policy trusts only keys in it",
        )
    options: dict[str, object] = {
        "port": host.port,
        "username": host.user,
        "known_hosts": str(known),
        "connect_timeout": connect_seconds,
        "keepalive_interval": keepalive,
        "keepalive_count_max": 3,
    }
    if factory is not None:
        options["client_factory"] = factory
    if host.key_file is not None:
        options["client_keys"] = [str(host.key_file.expanduser())]
        options["agent_path"] = None
    if password is not None:
        options["password"] = password.reveal()
        if host.key_file is None:
            options["client_keys"] = None
    try:
        return await asyncssh.connect(host.address, **options)  # type: ignore[arg-type]
    except (OSError, asyncssh.Error, TimeoutError, asyncssh.KeyImportError) as exc:
        raise HostUnavailable(host.name, describe(host, exc, password)) from None


async def free_bytes(sftp: asyncssh.SFTPClient, folder: str) -> int:
    attrs = await sftp.statvfs(folder)
    return attrs.bavail * attrs.frsize


def disk_message(host: HostConfig, free: int, need: int, what: str) -> str:
    return (
        f"scratch {host.scratch_dir} is full: {free / MiB:.1f} MiB free, "
        f"{need / MiB:.1f} MiB needed ({what})"
    )


async def check_free(host: HostConfig, sftp: asyncssh.SFTPClient, need: int, what: str) -> int:
    """Free bytes in the scratch folder, or HostUnavailable when `need` does not fit."""
    try:
        free = await free_bytes(sftp, host.scratch_dir)
    except (asyncssh.Error, OSError) as exc:
        message = f"cannot read free space of {host.scratch_dir}: {exc}"
        raise HostUnavailable(host.name, message) from None
    if free < need:
        raise HostUnavailable(host.name, disk_message(host, free, need, what))
    return free


async def pack_present(sftp: asyncssh.SFTPClient, packs_dir: str, pack_hash: str) -> bool:
    return await sftp.exists(posixpath.join(packs_dir, pack_hash + COMPLETE_SUFFIX))


async def upload_pack(
    host: HostConfig, sftp: asyncssh.SFTPClient, local_root: Path, packs_dir: str, pack_hash: str
) -> None:
    """Upload a pack beside its final place, rename it in, then write the marker (last).

    A full disk mid-way (ENOSPC) removes the partial copy and says so, naming the host."""
    final = posixpath.join(packs_dir, pack_hash)
    staging = posixpath.join(packs_dir, f".upload-{pack_hash[:16]}-{uuid.uuid4().hex[:8]}")
    try:
        await sftp.makedirs(packs_dir, exist_ok=True)
        await sftp.put(str(local_root), staging, recurse=True)
        if await sftp.exists(final):  # another lab process won the race: same hash, same bytes
            await sftp.rmtree(staging)
        else:
            await sftp.posix_rename(staging, final)
        async with sftp.open(final + COMPLETE_SUFFIX, "w") as marker:
            await marker.write("complete\n")
    except (asyncssh.SFTPError, OSError) as exc:
        with contextlib.suppress(asyncssh.Error, OSError):
            await asyncio.shield(sftp.rmtree(staging))
        free = None
        with contextlib.suppress(asyncssh.Error, OSError):
            free = await free_bytes(sftp, packs_dir)
        if isinstance(exc, asyncssh.SFTPNoSpaceOnFilesystem | asyncssh.SFTPQuotaExceeded) or (
            free is not None and free < 4 * MiB
        ):
            detail = f"{free / MiB:.1f} MiB left" if free is not None else "no space left"
            raise HostUnavailable(
                host.name,
                f"scratch {host.scratch_dir} filled up while uploading input pack "
                f"{pack_hash[:12]} ({detail})",
            ) from None
        message = f"upload of input pack {pack_hash[:12]} failed: {exc}"
        raise HostUnavailable(host.name, message) from None
