"""The Deep Agents file backend of a team: the built-in file tools, confined to its workspace.

Deep Agents' `FilesystemBackend(virtual_mode=True)` already maps `/` to the workspace; this
subclass routes every path through `TeamWorkspace.resolve`, which also refuses symlinks, git
internals and writes to files the operator fixes. Refusals are `PermissionError`s, which the
backend turns into a tool error the agent can read (without the host path). The workspace's
repository lives outside the tree; should anything git reads as its own be in it anyway (an
earlier session's data), `ls`, `grep` and `glob` leave it out of what they return.
"""

from __future__ import annotations

from pathlib import Path

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    GlobResult,
    GrepResult,
    LsResult,
    WriteResult,
)

from justkernel.core.relpath import is_git_name
from justkernel.teams.workspace import TeamWorkspace, WorkspaceError


def _shown(virtual_path: str) -> bool:
    """False for a path below (or naming) anything git reads as its own."""
    return not any(is_git_name(part) for part in virtual_path.split("/") if part)


class WorkspaceBackend(FilesystemBackend):
    def __init__(self, workspace: TeamWorkspace) -> None:
        super().__init__(root_dir=workspace.root, virtual_mode=True)
        self.workspace = workspace

    def _resolve_path(self, key: str) -> Path:
        return self.workspace.resolve(key)

    def _check_write(self, file_path: str) -> str | None:
        try:
            self.workspace.resolve(file_path, write=True)
        except WorkspaceError as exc:
            return str(exc)
        return None

    def ls(self, path: str) -> LsResult:
        result = super().ls(path)
        if result.entries is not None:
            result.entries = [e for e in result.entries if _shown(e["path"])]
        return result

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
        context_lines: int = 0,
    ) -> GrepResult:
        result = super().grep(pattern, path, glob, max_count=max_count, context_lines=context_lines)
        if result.matches is not None:
            result.matches = [m for m in result.matches if _shown(m["path"])]
        return result

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        result = super().glob(pattern, path)
        if result.matches is not None:
            result.matches = [m for m in result.matches if _shown(m["path"])]
        return result

    def write(self, file_path: str, content: str) -> WriteResult:
        if (problem := self._check_write(file_path)) is not None:
            return WriteResult(error=problem)
        return super().write(file_path, content)

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        if (problem := self._check_write(file_path)) is not None:
            return EditResult(error=problem)
        return super().edit(file_path, old_string, new_string, replace_all)

    def delete(self, file_path: str) -> DeleteResult:
        if (problem := self._check_write(file_path)) is not None:
            return DeleteResult(error=problem)
        return super().delete(file_path)
