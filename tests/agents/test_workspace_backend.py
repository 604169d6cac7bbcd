"""The agent's file backend: every way to write — uploads included — meets the same check.

Deep Agents' own middlewares write through `upload_files` (media offloaded by summarisation),
not the write tool; a path the write tool refuses (fixed by the operator, outside the editable
folders, or git-looking) must be refused there too, and leave nothing behind. The backend
extends Deep Agents through its public methods only, so no private helper can be bypassed.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import PERMISSION_DENIED
from langchain.agents.middleware.types import AgentMiddleware

from justkernel.agents.backend import WorkspaceBackend
from justkernel.agents.middleware import budget, events, inbox, slots, watchdog
from justkernel.operators import load_operator
from justkernel.teams.workspace import TeamWorkspace

REFUSED = [
    "/harness/harness.c",  # fixed by the operator
    "/include/cmg_abi.h",
    "/spec.md",
    "/notes.md",  # neither editable nor scratch
    "/op_kernel/x/.git/config",  # git-looking, at any depth and however spelt
    "/op_kernel/.GIT/hooks/post-checkout",
    "/scratch/git~1/config",
    "/op_kernel/.gitattributes",
    "/../escape.c",
]


@pytest.fixture
def workspace(tmp_path: Path) -> TeamWorkspace:
    return TeamWorkspace.create(tmp_path / "teams" / "team-001", load_operator())


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("path", REFUSED)
async def test_an_upload_is_refused_where_a_write_is(workspace: TeamWorkspace, path: str) -> None:
    backend = WorkspaceBackend(workspace)
    before = _tree(workspace.root.parent)
    assert backend.write(path, "x").error is not None
    (sync,) = backend.upload_files([(path, b"planted")])
    (asynchronous,) = await backend.aupload_files([(path, b"planted")])
    assert (sync.path, sync.error) == (path, PERMISSION_DENIED)
    assert (asynchronous.path, asynchronous.error) == (path, PERMISSION_DENIED)
    assert _tree(workspace.root.parent) == before  # nothing written, nothing created


def test_a_mixed_upload_writes_only_what_a_write_may(workspace: TeamWorkspace) -> None:
    backend = WorkspaceBackend(workspace)
    answers = backend.upload_files(
        [
            ("/scratch/media/plot.png", b"\x89PNG"),
            ("/op_kernel/x/.git/config", b"[core]\n\tfsmonitor = touch /tmp/pwned\n"),
            ("/op_kernel/extra.h", b"#define X 1\n"),
        ]
    )
    assert [(a.path, a.error) for a in answers] == [
        ("/scratch/media/plot.png", None),
        ("/op_kernel/x/.git/config", PERMISSION_DENIED),
        ("/op_kernel/extra.h", None),
    ]
    assert (workspace.root / "scratch" / "media" / "plot.png").read_bytes() == b"\x89PNG"
    assert (workspace.root / "op_kernel" / "extra.h").read_bytes() == b"#define X 1\n"
    assert not (workspace.root / "op_kernel" / "x").exists()


def test_the_path_checked_is_the_path_written(workspace: TeamWorkspace) -> None:
    """The policy reads a backslash as a separator; the write lands where the policy looked,
    never in a top-level file whose name merely contains one."""
    backend = WorkspaceBackend(workspace)
    assert backend.write("op_kernel\\extra.h", "#define X 1\n").error is None
    (answer,) = backend.upload_files([("scratch\\note.txt", b"n")])
    assert answer.error is None
    assert (workspace.root / "op_kernel" / "extra.h").read_text() == "#define X 1\n"
    assert (workspace.root / "scratch" / "note.txt").read_bytes() == b"n"
    assert not [p for p in workspace.root.iterdir() if "\\" in p.name]
    for path in ("harness\\harness.c", "op_kernel\\.git\\config"):
        assert backend.write(path, "x").error is not None, path
        assert backend.upload_files([(path, b"x")])[0].error == PERMISSION_DENIED, path


def test_downloads_are_checked_like_reads(workspace: TeamWorkspace) -> None:
    backend = WorkspaceBackend(workspace)
    (workspace.root / "op_kernel" / "x" / ".git").mkdir(parents=True)
    (workspace.root / "op_kernel" / "x" / ".git" / "config").write_text("[core]\n")
    kernel, git = backend.download_files(["/op_kernel/cmg_kernel.c", "/op_kernel/x/.git/config"])
    assert kernel.error is None
    assert kernel.content == (workspace.root / "op_kernel" / "cmg_kernel.c").read_bytes()
    assert (git.content, git.error) == (None, PERMISSION_DENIED)


def _private_overrides(cls: type, base: type) -> list[str]:
    """The private methods of `base`'s classes that `cls` (our code) defines again."""
    theirs = {
        name
        for klass in inspect.getmro(base)
        for name, value in vars(klass).items()
        if name.startswith("_") and not name.startswith("__") and callable(value)
    }
    ours = [k for k in inspect.getmro(cls) if k.__module__.startswith("justkernel")]
    return sorted(name for klass in ours for name in vars(klass) if name in theirs)


def test_deep_agents_is_extended_only_through_public_methods() -> None:
    assert _private_overrides(WorkspaceBackend, FilesystemBackend) == []
    for module in (budget, events, inbox, slots, watchdog):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, AgentMiddleware) and cls is not AgentMiddleware:
                assert _private_overrides(cls, AgentMiddleware) == [], cls
