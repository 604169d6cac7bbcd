"""Where the local judge keeps its secrets and where it evaluates, apart from every team.

    <judge folder>/            0700  default: <config dir>/judge ($XDG_CONFIG_HOME/justkernel/judge)
      hidden_seed              0600  the secret seed of the hidden points
      hidden_cases.toml        0600  the 15 points drawn from it
      token                    0600  the login token
      feedback_key             0600  keys the noise on published times (public.py)
      judge.db                 0600  submissions, results, best time per point
      server.json              0600  URL and pid of the running judge (for the local client)
      work_name                0600  the unguessable name of the evaluation folder

    <work root>/<work_name>/   0711  packs (hidden inputs), job folders, receipts, logs

The evaluation folder cannot live inside the 0700 judge folder: the sandbox runs as an
unprivileged uid that must traverse to the inputs it binds. It sits below a work root (default
the system temp folder) under a 128-bit random name kept in the judge folder, in a folder that
cannot be listed, so only the judge knows the path. Neither folder may overlap the lab's data
folder, where team workspaces, packs and job folders live.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from justkernel.evaluation.local_judge_files import SERVER_FILE, TOKEN_FILE

DB_FILE = "judge.db"
WORK_NAME_FILE = "work_name"
FEEDBACK_KEY_FILE = "feedback_key"


class JudgeFolderError(RuntimeError):
    """The judge folder or work root is unsafe (shared, overlapping the lab, not ours)."""


def write_private(path: Path, text: str) -> None:
    """Write `path` atomically, created 0600 (never readable by others, whatever the umask)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def _own_folder(path: Path, mode: int) -> None:
    """Create `path` (a real folder owned by us, not a link) with exactly `mode`."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    st = path.lstat()
    if path.is_symlink() or not path.is_dir():
        raise JudgeFolderError(f"{path}: not a plain folder")
    if st.st_uid != os.geteuid():
        raise JudgeFolderError(f"{path}: owned by uid {st.st_uid}, not by this user")
    os.chmod(path, mode)


def default_work_root() -> Path:
    return Path(tempfile.gettempdir()) / f"justkernel-judge-{os.geteuid()}"


@dataclass(frozen=True)
class JudgeFolder:
    """The judge's private folder and its evaluation folder; `open` creates and checks both."""

    root: Path
    work_dir: Path

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        work_root: Path | None = None,
        lab_data_dir: Path | None = None,
    ) -> JudgeFolder:
        root = Path(root).expanduser().resolve()
        work_root = Path(work_root or default_work_root()).expanduser().resolve()
        if lab_data_dir is not None:
            lab = Path(lab_data_dir).expanduser().resolve()
            for name, path in (("judge folder", root), ("work root", work_root)):
                if _overlap(path, lab):
                    raise JudgeFolderError(
                        f"the {name} {path} overlaps the lab data folder {lab}; "
                        "the judge must live apart from every team workspace"
                    )
        if _overlap(root, work_root):
            raise JudgeFolderError("the work root must be outside the judge folder")
        _own_folder(root, 0o700)
        _own_folder(work_root, 0o711)
        name_file = root / WORK_NAME_FILE
        if not name_file.is_file():
            write_private(name_file, secrets.token_hex(16) + "\n")
        work_dir = work_root / name_file.read_text().strip()
        _own_folder(work_dir, 0o711)
        return cls(root=root, work_dir=work_dir)

    @property
    def db_path(self) -> Path:
        return self.root / DB_FILE

    @property
    def token_path(self) -> Path:
        return self.root / TOKEN_FILE

    def token(self) -> str:
        """The login token, created on first use (32 random bytes, URL-safe)."""
        if not self.token_path.is_file():
            write_private(self.token_path, secrets.token_urlsafe(32) + "\n")
        return self.token_path.read_text().strip()

    def feedback_key(self) -> bytes:
        """The key of the published times' noise, created on first use (32 random bytes):
        without it nobody can tell the noise apart from the time."""
        path = self.root / FEEDBACK_KEY_FILE
        if not path.is_file():
            write_private(path, secrets.token_hex(32) + "\n")
        return bytes.fromhex(path.read_text().strip())

    def write_server_info(self, url: str) -> None:
        write_private(self.root / SERVER_FILE, json.dumps({"url": url, "pid": os.getpid()}))

    def clear_server_info(self) -> None:
        (self.root / SERVER_FILE).unlink(missing_ok=True)
