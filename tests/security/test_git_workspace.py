"""A team plants a git repository in its workspace so that the lab's own commit (the snapshot
before every simulation) runs the repository's `core.fsmonitor` command on the host.

The attack as a hostile team model would run it, through the real Deep Agents file backend:
find the workspace's HEAD commit with `grep("commit (initial)", "/")`, then write
`op_kernel/x/.git/{HEAD,config,objects/info/alternates,refs/heads/main}` so git takes
`op_kernel/x` for an embedded repository. The lab must refuse every such write, show nothing of
git's internals to grep/glob/ls, and never run a command from a repository found in the tree.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from justkernel.agents.backend import WorkspaceBackend
from justkernel.operators import load_operator
from justkernel.teams.workspace import TeamWorkspace, WorkspaceError


@pytest.fixture
def workspace(tmp_path: Path) -> TeamWorkspace:
    return TeamWorkspace.create(tmp_path / "teams" / "team-001", load_operator())


def _planted_repo(head: str, marker: Path) -> dict[str, str]:
    """The files of an embedded repository whose fsmonitor hook touches `marker`."""
    return {
        "HEAD": head + "\n",
        "config": (
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
            f'\tfsmonitor = "touch {marker}; false"\n'
        ),
        "objects/info/alternates": "../../../../.git/objects\n",
        "refs/heads/main": head + "\n",
    }


def _committed_paths(workspace: TeamWorkspace) -> list[tuple[str, str]]:
    """(mode, path) of every entry of the workspace's HEAD tree, read by the test's own git."""
    out = subprocess.run(
        ["git", "--git-dir", str(workspace.git_dir), "ls-tree", "-r", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"},
    ).stdout
    return [(line.split()[0], line.split("\t", 1)[1]) for line in out.splitlines()]


@pytest.mark.parametrize("git_dir", [".git", ".GIT", ".git.", ".git ", ".Git..", "git~1"])
def test_a_repository_written_through_the_file_tools_is_refused_and_runs_nothing(
    workspace: TeamWorkspace, tmp_path: Path, git_dir: str
) -> None:
    backend = WorkspaceBackend(workspace)
    marker = tmp_path / "fsmonitor-ran"
    for name, content in _planted_repo(workspace.head(), marker).items():
        result = backend.write(f"/op_kernel/x/{git_dir}/{name}", content)
        assert result.error is not None and "git" in result.error, (git_dir, name)
        assert str(tmp_path) not in result.error  # the refusal never shows a host path
    assert backend.edit(f"/op_kernel/x/{git_dir}/config", "[core]", "[core]").error is not None
    assert not (workspace.root / "op_kernel" / "x").exists()

    kernel = workspace.resolve("op_kernel/cmg_kernel.c", write=True)
    kernel.write_text(kernel.read_text() + "\n/* experiment */\n")
    workspace.commit("experiment 1: full simulation")  # what simulate_kernel runs first
    assert not marker.exists()


def test_a_repository_already_in_the_tree_never_runs_its_commands(
    workspace: TeamWorkspace, tmp_path: Path
) -> None:
    """Belt and braces: a repository that got into the tree some other way (an earlier
    session's data, a bug elsewhere) is neither run nor committed by any of the lab's git
    operations."""
    marker = tmp_path / "fsmonitor-ran"
    base = workspace.head()
    for name, content in _planted_repo(base, marker).items():
        target = workspace.root / "op_kernel" / "x" / ".git" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    (workspace.root / "op_kernel" / "x" / "vendored.h").write_text("#define V 1\n")

    first = workspace.commit("experiment 1")
    kernel = workspace.resolve("op_kernel/cmg_kernel.c", write=True)
    kernel.write_text(kernel.read_text() + "\n/* experiment */\n")
    second = workspace.commit("experiment 2")
    assert "+/* experiment */" in workspace.diff_from(first.commit)
    workspace.restore_editable(base)
    assert not marker.exists()

    assert second.commit != first.commit
    entries = _committed_paths(workspace)
    assert all(mode != "160000" for mode, _ in entries)  # no embedded repository (gitlink)
    assert not [p for _, p in entries if ".git/" in p.lower()]
    assert not [p for p in workspace.editable_files() if ".git/" in p]


def test_the_file_tools_show_nothing_of_git(workspace: TeamWorkspace) -> None:
    backend = WorkspaceBackend(workspace)
    workspace.commit("a second commit, so the log has more than one line")
    for rel, text in {  # left in the tree by an earlier session, say
        "op_kernel/x/.git/config": "[core]\n",
        "op_kernel/.GIT/logs/HEAD": "commit (initial): planted\n",
    }.items():
        (workspace.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace.root / rel).write_text(text)

    assert backend.grep("commit (initial)", "/").matches == []
    assert backend.grep("JustKernel team", "/").matches == []
    assert backend.grep("[core]", "/").matches == []
    for pattern in ("**/*", "**/HEAD", ".git/**", "**/config", "*"):
        matches = backend.glob(pattern, "/").matches or []
        assert not [m["path"] for m in matches if ".git" in m["path"].lower()], pattern
    for folder in ("/", "/op_kernel", "/op_kernel/x"):
        listed = [e["path"] for e in backend.ls(folder).entries or []]
        assert not [p for p in listed if ".git" in p.lower()], folder
    assert "/op_kernel/cmg_kernel.c" in [e["path"] for e in backend.ls("/op_kernel").entries or []]
    for path in ("/.git/HEAD", "/.git/logs/HEAD", "/.git/config", "/.GIT/config"):
        assert backend.read(path).error is not None, path


def test_the_workspace_repository_lives_outside_the_team_tree(workspace: TeamWorkspace) -> None:
    assert not (workspace.root / ".git").exists()
    assert workspace.git_dir.is_dir()
    assert workspace.root not in workspace.git_dir.parents
    for path in ("/.git/config", "op_kernel/.git/config", "/../team-001.git/config"):
        with pytest.raises(WorkspaceError):
            workspace.resolve(path, write=True)


def test_an_earlier_sessions_workspace_is_moved_out_of_the_tree(tmp_path: Path) -> None:
    """Workspaces from before the move kept `.git` inside; opening one moves it out, with its
    history, and forgets any configuration or hook it had."""
    op = load_operator()
    root = tmp_path / "teams" / "team-001"
    shutil.copytree(op.project_dir, root)
    env = {
        "PATH": "/usr/bin:/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "old",
        "GIT_AUTHOR_EMAIL": "old@x",
        "GIT_COMMITTER_NAME": "old",
        "GIT_COMMITTER_EMAIL": "old@x",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "old"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    old_head = (
        subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], check=True, env=env, capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    marker = tmp_path / "hook-ran"
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    with (root / ".git" / "config").open("a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')

    workspace = TeamWorkspace.create(root, op)
    assert not (root / ".git").exists()
    assert workspace.head() == old_head
    kernel = workspace.resolve("op_kernel/cmg_kernel.c", write=True)
    kernel.write_text(kernel.read_text() + "\n/* after the move */\n")
    snapshot = workspace.commit("after the move")
    assert snapshot.commit != old_head
    assert not marker.exists()
