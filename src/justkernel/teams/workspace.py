"""A team's workspace: the operator's project template, with its own git repository beside it.

Every path a team tool touches goes through `resolve`, which confines it to the workspace:
absolute paths are taken as workspace-rooted (the agent sees the workspace as `/`), `..` and
symlinks are refused, forbidden files cannot be written, and no part of a path may be a name git
reads as its own (`core.relpath`), at any depth. The repository lives outside the tree
(`teams.git`), so the team can neither read nor plant git configuration, and snapshots never
run anything a team wrote. The hidden judge cases and other teams' workspaces are never inside.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from justkernel.core.relpath import relpath_problem
from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.operators import OperatorDefinition
from justkernel.paths import resources_dir
from justkernel.teams.git import NO_NESTED_GIT, WorkspaceRepo

SPEC_NAME = "spec.md"
SCRATCH_DIR = "scratch"  # the team's free folder: notes, fetched candidates, large tool output
SKILLS_DIR = "skills"  # read-only copies of resources/skills, loaded by the harness
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


class TeamWorkspace:
    def __init__(self, root: Path, operator: OperatorDefinition) -> None:
        self.root = root.resolve()
        self.operator = operator
        self.repo = WorkspaceRepo(self.root)
        self._committed: Snapshot | None = None  # the last snapshot `commit` made
        self.repo.move_out_of_tree()  # an earlier session's workspace kept `.git` inside

    @property
    def git_dir(self) -> Path:
        return self.repo.git_dir

    # -- creation -------------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, operator: OperatorDefinition) -> TeamWorkspace:
        """Copy the template and the spec, create the repository beside the tree, and commit
        the baseline (idempotent)."""
        ws = cls(root, operator)
        if ws.repo.exists() and ws.repo.has_head():
            return ws
        ws.root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(operator.project_dir, ws.root, dirs_exist_ok=True)
        shutil.copyfile(operator.spec_path, ws.root / SPEC_NAME)
        shutil.copytree(resources_dir() / "skills", ws.root / SKILLS_DIR, dirs_exist_ok=True)
        (ws.root / SCRATCH_DIR).mkdir(exist_ok=True)
        (ws.root / SCRATCH_DIR / ".keep").write_text("")
        ws.repo.init()
        ws.repo.commit("baseline from the operator template")
        return ws

    # -- confinement ----------------------------------------------------------------------
    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The host path for an agent-visible path, or `WorkspaceError` saying why not."""
        if "\0" in path:
            raise WorkspaceError(f"{path!r}: invalid path")
        rel = PurePosixPath(path.replace("\\", "/").lstrip("/"))
        if rel.parts and (problem := relpath_problem(rel.as_posix())) is not None:
            raise WorkspaceError(f"{path}: {problem}")
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
        return {
            rel: (self.root / rel).read_bytes()
            for rel in self.repo.tree_files()
            if self.operator.paths.access(rel) == "editable"
        }

    def export_candidate(self, dest: Path) -> Path:
        """Copy the candidate project (the operator's files, without notes, skills, spec,
        links or anything git reads as its own) to `dest`: exactly what an evaluation or a
        submission sees."""
        dest.mkdir(parents=True, exist_ok=True)
        top = {e.name for e in self.root.iterdir()} - WORKSPACE_ONLY
        for rel in self.repo.tree_files():
            if rel.split("/", 1)[0] not in top:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / rel, target)
        return dest

    def tree_sha256(self) -> str:
        return editable_tree_sha256(self.editable_files())

    def head(self) -> str:
        return self.repo.head()

    def commit(self, message: str) -> Snapshot:
        """Commit whatever changed (nothing to commit is fine) and name the snapshot.

        When the editable files are those this workspace last committed, that commit is the
        snapshot (it holds exactly these sources) and git is not run: a team simulates the
        same source again and again (probe, then full; a rerun), and each commit was three to
        five git processes. Notes in scratch/ join the next commit of a changed source."""
        tree = self.tree_sha256()
        last = self._committed
        if last is not None and last.tree_sha256 == tree:
            return last
        self._committed = Snapshot(commit=self.repo.commit(message), tree_sha256=tree)
        return self._committed

    def restore_editable(self, commit: str) -> Snapshot:
        """Put the editable files back as they were at `commit` (a revert the team asked for)."""
        patterns = [f":(glob){p}" for p in self.operator.paths.editable]
        self.repo.git("checkout", commit, "--", *patterns, NO_NESTED_GIT)
        return self.commit(f"revert editable files to {commit[:12]}")

    def diff_from(self, commit: str) -> str:
        """The editable files' change from `commit` to the tree as it is now (new files too):
        the index made the tree's files, then compared with `commit` (no tree object
        written for it)."""
        self.repo.fill_index()
        editable = self.operator.paths.editable
        return self.repo.git(
            "diff",
            "--cached",
            "--no-ext-diff",
            "--no-textconv",
            commit,
            "--",
            *editable,
            NO_NESTED_GIT,
        )
