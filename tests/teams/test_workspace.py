"""Team workspaces: git from the template, snapshots, and no way out (escape attempts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from justkernel.agents.backend import WorkspaceBackend
from justkernel.operators import load_operator
from justkernel.teams.workspace import TeamWorkspace, WorkspaceError


@pytest.fixture
def workspace(tmp_path: Path) -> TeamWorkspace:
    return TeamWorkspace.create(tmp_path / "teams" / "team-001", load_operator())


def test_created_from_the_template_with_a_baseline_commit(workspace: TeamWorkspace) -> None:
    op = load_operator()
    template = (op.project_dir / "op_kernel" / "cmg_kernel.c").read_bytes()
    assert (workspace.root / "op_kernel" / "cmg_kernel.c").read_bytes() == template
    assert (workspace.root / "spec.md").exists()
    assert len(workspace.head()) == 40
    assert set(workspace.editable_files()) == {"op_host/cmg_tiling.c", "op_kernel/cmg_kernel.c"}
    again = TeamWorkspace.create(workspace.root, op)  # idempotent: keeps history
    assert again.head() == workspace.head()


def test_snapshots_track_source_changes_and_revert(workspace: TeamWorkspace) -> None:
    base = workspace.commit("nothing changed")
    assert base.commit == workspace.head()
    kernel = workspace.resolve("/op_kernel/cmg_kernel.c", write=True)
    kernel.write_text(kernel.read_text() + "\n/* tweak */\n")
    changed = workspace.commit("tweak")
    assert changed.commit != base.commit
    assert changed.tree_sha256 != base.tree_sha256
    assert "+/* tweak */" in workspace.diff_from(base.commit)
    reverted = workspace.restore_editable(base.commit)
    assert reverted.tree_sha256 == base.tree_sha256
    # notes in scratch/ are not part of the candidate source
    workspace.resolve("scratch/notes.md", write=True).write_text("idea")
    assert workspace.tree_sha256() == base.tree_sha256


def test_snapshots_start_from_an_empty_index_each_time(workspace: TeamWorkspace) -> None:
    """The index is dropped, not emptied by a git process, before each snapshot: a file gone
    from the tree is gone from the next commit and diff, a new one is in them, and a tree
    that did not change makes no commit."""
    base = workspace.commit("base")
    added = workspace.resolve("/op_kernel/extra.c", write=True)
    added.write_text("int extra;\n")
    with_extra = workspace.commit("add extra.c")
    assert with_extra.commit != base.commit
    assert "new file mode" in workspace.diff_from(base.commit)
    assert workspace.commit("again, unchanged").commit == with_extra.commit
    added.unlink()
    diff = workspace.diff_from(with_extra.commit)
    assert "deleted file mode" in diff and "extra.c" in diff
    without = workspace.commit("remove extra.c")
    assert without.commit != with_extra.commit
    assert without.tree_sha256 == base.tree_sha256
    assert "extra.c" not in workspace.repo.git("ls-tree", "-r", "--name-only", without.commit)
    assert workspace.diff_from(without.commit) == ""


@pytest.mark.parametrize(
    ("path", "write", "message"),
    [
        ("../team-002/op_kernel/cmg_kernel.c", False, "'..'"),
        ("/../../etc/passwd", False, "'..'"),
        ("op_kernel/../../x", True, "'..'"),
        ("/.git/config", False, "git internals"),
        ("harness/harness.c", True, "fixed by the operator"),
        ("include/cmg_abi.h", True, "fixed by the operator"),
        ("Makefile", True, "fixed by the operator"),
        ("spec.md", True, "only op_host/"),
    ],
)
def test_escape_attempts_fail_with_a_clear_error(
    workspace: TeamWorkspace, path: str, write: bool, message: str
) -> None:
    with pytest.raises(WorkspaceError, match=message):
        workspace.resolve(path, write=write)


def test_absolute_paths_are_workspace_rooted(workspace: TeamWorkspace) -> None:
    assert workspace.resolve("/etc/passwd") == workspace.root / "etc" / "passwd"
    assert not workspace.resolve("/etc/passwd").exists()


def test_symlinks_are_never_followed(workspace: TeamWorkspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("host secret")
    os.symlink(outside, workspace.root / "scratch" / "link.txt")
    os.symlink(tmp_path, workspace.root / "scratch" / "dir")
    with pytest.raises(WorkspaceError, match="symlinks"):
        workspace.resolve("scratch/link.txt")
    with pytest.raises(WorkspaceError, match="symlinks"):
        workspace.resolve("scratch/dir/outside.txt", write=True)


def test_the_agent_file_tools_cannot_leave_the_workspace(
    workspace: TeamWorkspace, tmp_path: Path
) -> None:
    backend = WorkspaceBackend(workspace)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    os.symlink(secret, workspace.root / "scratch" / "s.txt")

    assert backend.read("/op_kernel/cmg_kernel.c").error is None
    for path in ("/../secret.txt", "/scratch/s.txt", "/.git/HEAD"):
        result = backend.read(path)
        assert result.error is not None, path
        assert str(tmp_path) not in result.error  # never the host path
    assert backend.read("/etc/shadow").error is not None  # workspace-rooted: not found

    harness_before = (workspace.root / "harness" / "harness.c").read_text()
    assert backend.write("/harness/harness.c", "int main(){}").error is not None
    assert backend.edit("/include/cmg_abi.h", "CMG", "XXX").error is not None
    assert backend.write("/../escape.c", "x").error is not None
    assert not (workspace.root.parent / "escape.c").exists()
    assert (workspace.root / "harness" / "harness.c").read_text() == harness_before
    assert backend.write("/scratch/s.txt", "overwrite through link").error is not None
    assert secret.read_text() == "host secret"

    ok = backend.write("/op_kernel/extra.h", "#define X 1\n")
    assert ok.error is None
    assert (workspace.root / "op_kernel" / "extra.h").read_text() == "#define X 1\n"


def test_an_unchanged_source_is_the_last_commit_without_running_git(
    workspace: TeamWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team simulates the same source again and again: its snapshot is the commit made for
    those sources, found without a git process (git is off the PATH here); a changed source
    commits again, scratch notes included."""
    kernel = workspace.resolve("/op_kernel/cmg_kernel.c", write=True)
    kernel.write_text(kernel.read_text() + "\n/* once */\n")
    first = workspace.commit("probe")
    workspace.resolve("scratch/notes.md", write=True).write_text("why it is faster")
    with monkeypatch.context() as off:
        off.setenv("PATH", "/nonexistent")
        assert workspace.commit("full run") == first
    kernel.write_text(kernel.read_text() + "/* twice */\n")
    second = workspace.commit("changed")
    assert second.commit != first.commit and second.tree_sha256 != first.tree_sha256
    listed = workspace.repo.git("ls-tree", "-r", "--name-only", second.commit)
    assert "scratch/notes.md" in listed.split()
