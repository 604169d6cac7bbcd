"""A team's workspace: its own git repository, initialised from the operator's project template.

Every path a team tool touches goes through `resolve`, which confines it to the workspace:
absolute paths are taken as workspace-rooted (the agent sees the workspace as `/`), `..` and
symlinks are refused, forbidden files cannot be written, and git internals are off limits.
The hidden judge cases and other teams' workspaces are never inside, so they cannot be reached.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from justkernel.operators import OperatorDefinition
from justkernel.paths import resources_dir

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "JustKernel team",
    "GIT_AUTHOR_EMAIL": "team@justkernel.local",
    "GIT_COMMITTER_NAME": "JustKernel team",
    "GIT_COMMITTER_EMAIL": "team@justkernel.local",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}
SPEC_NAME = "spec.md"
SCRATCH_DIR = "scratch"  # the team's free folder: notes, fetched candidates, large tool output
SKILLS_DIR = "skills"  # read-only copies of resources/skills, loaded by the harness
PRIVATE_PARTS = {".git"}
# top-level entries that belong to the workspace, not to the candidate project
WORKSPACE_ONLY = {".git", ".gitignore", "build", SCRATCH_DIR, SKILLS_DIR, SPEC_NAME}


class WorkspaceError(PermissionError):
    """A path or action is not allowed in this workspace; the message is safe to show the agent
    (it names the path as the agent gave it, never the host path)."""


@dataclass(frozen=True)
class Snapshot:
    """The editable files of a workspace at one moment: what an experiment ran."""

    commit: str
    tree_sha256: str


def editable_tree_sha256(files: dict[str, bytes]) -> str:
    """SHA-256 over sorted (path, content) pairs: the identity of a candidate's source."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        digest.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


class TeamWorkspace:
    def __init__(self, root: Path, operator: OperatorDefinition) -> None:
        self.root = root.resolve()
        self.operator = operator

    # -- creation -------------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, operator: OperatorDefinition) -> TeamWorkspace:
        """Copy the template and the spec, `git init`, and commit the baseline (idempotent)."""
        ws = cls(root, operator)
        if (ws.root / ".git").is_dir():
            return ws
        ws.root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(operator.project_dir, ws.root, dirs_exist_ok=True)
        shutil.copyfile(operator.spec_path, ws.root / SPEC_NAME)
        shutil.copytree(resources_dir() / "skills", ws.root / SKILLS_DIR, dirs_exist_ok=True)
        (ws.root / SCRATCH_DIR).mkdir(exist_ok=True)
        (ws.root / SCRATCH_DIR / ".keep").write_text("")
        (ws.root / ".gitignore").write_text("build/\n")
        ws._git("init", "-q", "-b", "main")
        ws._git("add", "-A")
        ws._git("commit", "-q", "-m", "baseline from the operator template")
        return ws

    def _git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", "-C", str(self.root), *args],
            env={**os.environ, **_GIT_ENV},
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {result.stderr.strip()[:500]}")
        return result.stdout.strip()

    # -- confinement ----------------------------------------------------------------------
    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The host path for an agent-visible path, or `WorkspaceError` saying why not."""
        if "\0" in path:
            raise WorkspaceError(f"{path!r}: invalid path")
        rel = PurePosixPath(path.replace("\\", "/"))
        if rel.is_absolute():
            rel = rel.relative_to("/")
        if ".." in rel.parts:
            raise WorkspaceError(f"{path}: '..' is not allowed; paths stay inside the workspace")
        if rel.parts and rel.parts[0] in PRIVATE_PARTS:
            raise WorkspaceError(f"{path}: git internals are not accessible")
        current = self.root
        for part in rel.parts:
            current = current / part
            if current.is_symlink():
                raise WorkspaceError(f"{path}: symlinks are not followed in the workspace")
        if write:
            access = self.operator.paths.access(rel.as_posix()) if rel.parts else "forbidden"
            in_scratch = bool(rel.parts) and rel.parts[0] == SCRATCH_DIR
            if access == "forbidden":
                raise WorkspaceError(f"{path}: fixed by the operator; it cannot change")
            if access != "editable" and not in_scratch:
                raise WorkspaceError(
                    f"{path}: only op_host/, op_kernel/ and {SCRATCH_DIR}/ may be written"
                )
        return current

    # -- source state ---------------------------------------------------------------------
    def editable_files(self) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root).as_posix()
            if rel.startswith(".git/") or not path.is_file() or path.is_symlink():
                continue
            if self.operator.paths.access(rel) == "editable":
                files[rel] = path.read_bytes()
        return files

    def export_candidate(self, dest: Path) -> Path:
        """Copy the candidate project (the operator's files, without notes, skills, spec or
        git) to `dest`: exactly what an evaluation or a submission sees."""
        dest.mkdir(parents=True, exist_ok=True)
        for entry in sorted(self.root.iterdir()):
            if entry.name in WORKSPACE_ONLY or entry.is_symlink():
                continue
            target = dest / entry.name
            if entry.is_dir():
                shutil.copytree(entry, target, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copyfile(entry, target)
        return dest

    def tree_sha256(self) -> str:
        return editable_tree_sha256(self.editable_files())

    def head(self) -> str:
        return self._git("rev-parse", "HEAD")

    def commit(self, message: str) -> Snapshot:
        """Commit whatever changed (nothing to commit is fine) and name the snapshot."""
        self._git("add", "-A")
        if self._git("status", "--porcelain"):
            self._git("commit", "-q", "-m", message)
        return Snapshot(commit=self.head(), tree_sha256=self.tree_sha256())

    def restore_editable(self, commit: str) -> Snapshot:
        """Put the editable files back as they were at `commit` (a revert the team asked for)."""
        patterns = [f":(glob){p}" for p in self.operator.paths.editable]
        self._git("checkout", commit, "--", *patterns)
        return self.commit(f"revert editable files to {commit[:12]}")

    def diff_from(self, commit: str) -> str:
        return self._git("diff", commit, "--", *self.operator.paths.editable)
