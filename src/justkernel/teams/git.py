"""Every git command the lab runs on a team's tree, with no configuration the team can write.

A workspace's repository lives beside the tree (`team-001.git` next to `team-001/`), never in
it: the team's tools see the tree only, so they can neither read nor write git's config, hooks
or objects. Each command also runs with a minimal environment, no system or global config, no
fsmonitor, hooks, submodules, external diff or textconv, and never treats a repository found
in the tree as one: snapshots stage an explicit list of plain files (plumbing, no tree walk by
git), so a nested `.git` is never opened.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from justkernel.core.relpath import is_git_name

# -c settings on every command; they also reach any git process git itself starts
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.symlinks=false",
    "core.protectNTFS=true",
    "core.protectHFS=true",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "protocol.file.allow=never",
    "protocol.allow=never",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "gc.auto=0",
)
IDENTITY = {
    "GIT_AUTHOR_NAME": "JustKernel team",
    "GIT_AUTHOR_EMAIL": "team@justkernel.local",
    "GIT_COMMITTER_NAME": "JustKernel team",
    "GIT_COMMITTER_EMAIL": "team@justkernel.local",
}
NO_NESTED_GIT = ":(exclude,icase,glob)**/.git/**"  # belt and braces on every pathspec list
FRESH_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
LEFT_OUT = frozenset({"build"})  # top-level folders never snapshotted (local build output)


class GitError(RuntimeError):
    """A git command of the lab failed; the message carries git's own words."""


def git_dir_of(root: Path) -> Path:
    """Where the repository of the workspace at `root` lives: beside it, out of its tree."""
    return root.with_name(root.name + ".git")


def _environment(git_dir: Path, work_tree: Path | None) -> dict[str, str]:
    tree = {} if work_tree is None else {"GIT_WORK_TREE": str(work_tree)}
    return {
        **tree,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": "/nonexistent",
        "GIT_DIR": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        **IDENTITY,
    }


def run_git(git_dir: Path, work_tree: Path | None, *args: str, stdin: bytes | None = None) -> str:
    """Run one git command on `work_tree` (None: the repository alone) with the repository at
    `git_dir`; GitError if it fails. The lab's only door to git: never call `git` another way."""
    argv = ["git"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    result = subprocess.run(
        [*argv, *args],
        cwd=work_tree or git_dir,
        env=_environment(git_dir, work_tree),
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip()[:500]
        raise GitError(f"git {args[0]} failed: {detail}")
    return result.stdout.decode("utf-8", "replace").strip()


def tree_files(root: Path) -> list[str]:
    """The plain files of a tree a snapshot holds, as relative POSIX paths: never a symlink,
    never anything below a part git reads as its own, never the top-level build folders.

    Read with `os.scandir`, whose entries know their type from the directory listing itself:
    a symlink is seen without following it and no file is stat'ed (the walk runs after every
    file tool's write and at every snapshot)."""
    found: list[str] = []

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        folders = []
        for entry in entries:  # a folder's files first, then its folders (as os.walk)
            name = entry.name
            if is_git_name(name) or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if not (prefix == "" and name in LEFT_OUT):
                    folders.append(entry)
            elif entry.is_file(follow_symlinks=False):
                found.append(prefix + name)
        for entry in folders:
            walk(entry.path, f"{prefix}{entry.name}/")

    walk(str(root), "")
    return found


class WorkspaceRepo:
    """The repository of one workspace: created, moved out of an old tree, and snapshotted."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = git_dir_of(root)

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        return run_git(self.git_dir, self.root, *args, stdin=stdin)

    def tree_files(self) -> list[str]:
        return tree_files(self.root)

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        self.git_dir.mkdir(parents=True, exist_ok=True)
        run_git(self.git_dir, None, "init", "-q", "--bare", "-b", "main")

    def move_out_of_tree(self) -> bool:
        """An earlier session's workspace kept its repository at `root/.git`: move it beside
        the tree with its history, and drop what it was configured with (its config is
        rewritten, its hooks removed). True when something was moved."""
        inside = self.root / ".git"
        if self.git_dir.exists() or inside.is_symlink() or not inside.is_dir():
            return False
        inside.rename(self.git_dir)
        (self.git_dir / "config").write_text(FRESH_CONFIG)
        shutil.rmtree(self.git_dir / "hooks", ignore_errors=True)
        for leftover in ("info/alternates", "objects/info/alternates", "commondir"):
            (self.git_dir / leftover).unlink(missing_ok=True)
        return True

    def fill_index(self, paths: Iterable[str] | None = None) -> None:
        """Make the index exactly the given files (default: every file `tree_files` finds).
        Plumbing only: git hashes the listed files and never walks the tree, so it never meets
        a repository planted in it. The old index is dropped first (a missing index is an
        empty one to git: what `read-tree --empty` wrote, without a process for it)."""
        listed = self.tree_files() if paths is None else list(paths)
        (self.git_dir / "index").unlink(missing_ok=True)
        if listed:
            names = b"\0".join(os.fsencode(p) for p in listed)  # any bytes the tree holds
            self.git("update-index", "--add", "-z", "--stdin", stdin=names)

    def stage(self, paths: Iterable[str] | None = None) -> str:
        """The index made exactly the given files (`fill_index`), and its tree id."""
        self.fill_index(paths)
        return self.git("write-tree")

    def head(self) -> str:
        return self.git("rev-parse", "--verify", "HEAD^{commit}")

    def has_head(self) -> bool:
        try:
            self.head()
        except GitError:
            return False
        return True

    def commit(self, message: str) -> str:
        """Snapshot the tree; a new commit only when it changed. Returns HEAD."""
        tree = self.stage()
        try:  # HEAD and its tree in one process ("--": both are revisions, never paths)
            found = self.git("rev-parse", "HEAD^{commit}", "HEAD^{tree}", "--").split()
            parent, parent_tree = found[0], found[1]
        except GitError:
            parent, parent_tree = None, None  # the baseline: nothing before it
        if parent is not None and parent_tree == tree:
            return parent
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        commit = self.git(*args)
        self.git("update-ref", "-m", message, "HEAD", commit)
        return commit
