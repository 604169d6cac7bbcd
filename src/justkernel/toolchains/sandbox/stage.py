"""Each run's folders, staged under one lab-owned traversable folder outside the data folder.

Why not bind the job folders where they live:

- bwrap runs as the unprivileged sandbox uid, which must traverse every folder on the way to
  what it binds. A lab cloned into /root (0700), a `mktemp -d` folder (0700) or an Ubuntu home
  (0750) cannot be reached, and the lab must not ask its user to open their home.
- A bind mount names its source in /proc/self/mountinfo: binding in place would show a kernel
  the lab's data folder, or the judge's secret work folder.

So every run binds copies under `<parent>/justkernel-sandbox-<uid>/run-<pid>-XXXX/`, where
`<parent>` is /var/tmp (on disk), or /tmp. A read-only input is hard-linked when any local
user could find and read it anyway and it is on the same filesystem (no copy of the large
input packs), else copied, readable by the run's sandbox uid alone (the staged paths are no
secret: other users can read a sandbox process's mountinfo). The output folder is staged with
what it already holds and moved back after the run.

The staging root is made by the lab itself with mode 0711 (traversable, not listable) and
checked on every use: a real folder (not a symlink), owned by the lab's uid, writable by no one
else. A local user who creates it first, to read or swap what the lab stages, gets a clear
`SandboxSetupError` instead. Run folders left by a lab that was killed are removed by the next
lab process that stages (their pid is gone).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from justkernel.toolchains.sandbox.paths import SandboxView
from justkernel.toolchains.sandbox.types import SandboxSetupError

PARENTS = (Path("/var/tmp"), Path("/tmp"))
_RUN_PREFIX = "run-"


def _parent() -> Path:
    """The first candidate that is a sticky folder owned by root, as /var/tmp and /tmp are."""
    for parent in PARENTS:
        with contextlib.suppress(OSError):
            st = parent.lstat()
            if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and st.st_mode & stat.S_ISVTX:
                return parent
    raise SandboxSetupError(
        f"no folder to stage sandbox jobs in: none of {', '.join(map(str, PARENTS))} "
        "is a sticky root-owned folder"
    )


def _check_root(root: Path) -> None:
    st = root.lstat()
    problem = None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        problem = "is not a folder (a symlink?)"
    elif st.st_uid != os.geteuid():
        problem = f"belongs to uid {st.st_uid}, not to the lab (uid {os.geteuid()})"
    elif st.st_mode & 0o022:
        problem = f"is writable by others (mode {stat.S_IMODE(st.st_mode):04o})"
    if problem:
        raise SandboxSetupError(
            f"the sandbox staging folder {root} {problem}; someone else may have created it: "
            "remove it and the lab makes its own"
        )


def staging_root(parent: Path | None = None) -> Path:
    """The lab's staging folder in `parent` (default: the first of PARENTS that fits),
    created 0711 if missing, checked every time."""
    root = (parent or _parent()) / f"justkernel-sandbox-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o711)
    _check_root(root)  # ours and a real folder: in a sticky parent nobody else can swap it
    if stat.S_IMODE(root.lstat().st_mode) != 0o711:  # the umask took some bits
        os.chmod(root, 0o711)
    _remove_stale_once(root)
    return root


@functools.cache
def _remove_stale_once(root: Path) -> None:
    """Remove run folders whose lab process is gone (it was killed before cleaning up)."""
    for entry in root.iterdir():
        pid = entry.name.removeprefix(_RUN_PREFIX).split("-", 1)[0]
        if entry.name.startswith(_RUN_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


Reader = tuple[int, int] | None  # (uid, gid) the sandbox runs as, when the lab is root


def _own(path: str, reader: Reader, mode: int) -> None:
    """Readable by the sandbox uid alone: chowned to it as root, else the lab's own uid."""
    if reader is not None:
        os.chown(path, *reader, follow_symlinks=False)
    os.chmod(path, mode)


def _anyone_may_read(path: str, st: os.stat_result) -> bool:
    """Whether any local user could already find and read this file: o+r on it, and o+rx on
    every folder above it (a 0711 parent hides a secret name, as the judge's work root does)."""
    if not (stat.S_ISREG(st.st_mode) and st.st_mode & 0o004):
        return False
    return all(os.stat(parent).st_mode & 0o005 == 0o005 for parent in Path(path).parents)


def _link_or_copy(src: str, dst: str, reader: Reader = None) -> None:
    """A hard link when that shows nobody anything new, else a copy only the sandbox reads.

    The staged path is no secret (any local user can read a process's /proc/<pid>/mountinfo),
    so a link must not make a file readable that was hidden before."""
    st = os.stat(src)
    if _anyone_may_read(src, st):
        with contextlib.suppress(OSError):  # another filesystem, or not allowed: copy
            os.link(src, dst)
            return
    shutil.copyfile(src, dst)
    _own(dst, reader, (stat.S_IMODE(st.st_mode) & 0o500) | 0o400)


def _stage_readonly(src: Path, dst: Path, reader: Reader) -> None:
    if not src.is_dir():
        _link_or_copy(str(src), str(dst), reader)
        return
    copy = functools.partial(_link_or_copy, reader=reader)
    shutil.copytree(src, dst, symlinks=True, copy_function=copy)
    for dirpath, _dirs, _files in os.walk(dst):
        _own(dirpath, reader, 0o500 if reader is not None else 0o700)


def _clear(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@dataclass(frozen=True)
class Stage:
    """One run's staged folders; `view` is what gets bound, `origin` what the caller gave."""

    root: Path
    view: SandboxView
    origin: SandboxView

    @classmethod
    def of(cls, origin: SandboxView, reader: Reader) -> Stage:
        """Stage `origin`; copies are readable by `reader` (the leased uid, as root) alone."""
        root = Path(tempfile.mkdtemp(prefix=f"{_RUN_PREFIX}{os.getpid()}-", dir=staging_root()))
        try:
            os.chmod(root, 0o711)
            (root / "ro").mkdir(mode=0o711)
            binds = {}
            for i, (dest, host) in enumerate(sorted(origin.binds.items())):
                binds[dest] = root / "ro" / f"{i}-{Path(dest).name}"
                _stage_readonly(host, binds[dest], reader)
            out = root / "out"
            shutil.copytree(origin.rw_dir, out, symlinks=True)
            os.chmod(out, 0o700)  # lent to the sandbox uid by the handover
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return cls(root, SandboxView(binds, out), origin)

    def hand_back(self) -> None:
        """Replace what the caller's output folder held with the staged output (call after
        the handover took it back, so no sandbox process is left and no trap in it)."""
        _clear(self.origin.rw_dir)
        for entry in list(self.view.rw_dir.iterdir()):
            shutil.move(entry, self.origin.rw_dir / entry.name)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
