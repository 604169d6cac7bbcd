"""The Deep Agents file backend of a team: the built-in file tools, confined to its workspace.

Deep Agents' `FilesystemBackend(virtual_mode=True)` already maps `/` to the workspace; this
subclass routes every path through `TeamWorkspace.resolve`, which also refuses symlinks, git
internals and writes to files the operator fixes. Refusals are `PermissionError`s, which the
backend turns into a tool error the agent can read (without the host path).
"""

from __future__ import annotations

from pathlib import Path

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import DeleteResult, EditResult, WriteResult

from justkernel.teams.workspace import TeamWorkspace, WorkspaceError


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
