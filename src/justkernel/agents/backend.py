"""The Deep Agents file backend of a team: the built-in file tools, confined to its workspace.

Deep Agents' `FilesystemBackend(virtual_mode=True)` already maps `/` to the workspace and refuses
`..`; this subclass extends it only through its public methods (the `BackendProtocol`, so a
newer Deep Agents cannot route around it through a renamed private helper). Each one first asks
`TeamWorkspace.resolve` — the team tree policy (`core/relpath.py`: no git names, no `..`, no
control characters), no symlinks, and for every write path (write, edit, delete and
`upload_files`, which Deep Agents' own middlewares use to offload media) the operator's path
policy — and hands Deep Agents the path in the form it checked, so the two cannot read a path
differently (a backslash is a separator to the policy, a file name character to POSIX). A
refusal comes back as the operation's error, naming the path as the agent gave it and never
the host path. The workspace's repository lives outside the tree; should anything git reads as
its own be in it anyway (an earlier session's data), `ls`, `grep` and `glob` leave it out.

Deep Agents keeps what it takes out of the history in folders of its own at the root: a tool
result over its limit goes to `/large_tool_results/<call id>` and the model is told that path.
The workspace lets a team write only its editable folders and `scratch/`, and on a refused write
Deep Agents keeps the whole result in the history, so those folders live in `scratch/`
(`/large_tool_results/x` is `/scratch/large_tool_results/x` for every operation), and the
model is told the scratch path (a write answers with the path it wrote).

The lab's own documents (`/spec.md` and the skills) are read whole from the top when no other
limit is asked: `read_file` pages at 100 lines by default, and the spec's symbol rules and
performance shapes sit past its first page, where a model that read one page would never look.
"""

from __future__ import annotations

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import (
    PERMISSION_DENIED,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.middleware.filesystem import DEFAULT_READ_LIMIT

from justkernel.core.relpath import is_git_name
from justkernel.teams.workspace import SCRATCH_DIR, SKILLS_DIR, TeamWorkspace, WorkspaceError

LAB_DOC_LINES = 2000  # a lab document's first read is this long (the spec has under 200 lines)
# Deep Agents' own folders for what it offloads (its FilesystemMiddleware's artifacts root)
OFFLOAD_DIRS = frozenset({"large_tool_results", "conversation_history"})


def is_lab_document(virtual_path: str) -> bool:
    """The spec and the skills: fixed, bounded, and meant to be read whole."""
    return virtual_path == "/spec.md" or virtual_path.startswith(f"/{SKILLS_DIR}/")


def in_scratch(path: str) -> str:
    """`path`, or for a path in one of Deep Agents' offload folders the same path under
    `scratch/` (the one folder outside the candidate a team may write)."""
    parts = path.replace("\\", "/").lstrip("/").split("/", 1)
    if parts[0] in OFFLOAD_DIRS:
        return f"/{SCRATCH_DIR}/{'/'.join(parts)}"
    return path


def _shown(virtual_path: str) -> bool:
    """False for a path below (or naming) anything git reads as its own."""
    return not any(is_git_name(part) for part in virtual_path.split("/") if part)


class Refused(Exception):
    """A path the workspace refuses; the message is safe to show the agent."""


class WorkspaceBackend(FilesystemBackend):
    def __init__(self, workspace: TeamWorkspace) -> None:
        super().__init__(root_dir=workspace.root, virtual_mode=True)
        self.workspace = workspace

    def checked(self, path: str, *, write: bool = False) -> str:
        """`path` as the workspace policy read it (a virtual path under `/`), or `Refused`
        saying why the team may not read it (or, with `write`, change it)."""
        try:
            host = self.workspace.resolve(in_scratch(path), write=write)
        except WorkspaceError as exc:
            raise Refused(str(exc)) from None
        rel = host.relative_to(self.workspace.root).as_posix()
        if ".." in rel:  # Deep Agents refuses it anywhere in a path (by raising)
            raise Refused(f"{path}: a name with '..' in it cannot be used by the file tools")
        return "/" if rel == "." else f"/{rel}"

    # -- reads ----------------------------------------------------------------------------
    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        try:
            path = self.checked(file_path)
        except Refused as exc:
            return ReadResult(error=str(exc))
        if offset == 0 and limit == DEFAULT_READ_LIMIT and is_lab_document(path):
            limit = LAB_DOC_LINES  # an explicit other limit is the model's choice
        return super().read(path, offset, limit)

    def ls(self, path: str) -> LsResult:
        try:
            checked = self.checked(path)
        except Refused as exc:
            return LsResult(error=str(exc), entries=None)
        result = super().ls(checked)
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
        try:
            checked = self.checked(path or "/")
        except Refused as exc:
            return GrepResult(error=str(exc), matches=[])
        result = super().grep(
            pattern, checked, glob, max_count=max_count, context_lines=context_lines
        )
        if result.matches is not None:
            result.matches = [m for m in result.matches if _shown(m["path"])]
        return result

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            checked = self.checked(path or "/")
        except Refused as exc:
            return GlobResult(error=str(exc), matches=None)
        result = super().glob(pattern, checked)
        if result.matches is not None:
            result.matches = [m for m in result.matches if _shown(m["path"])]
        return result

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """Each path is checked like a read; answers in the order asked."""
        answers: list[FileDownloadResponse] = []
        for path in paths:
            try:
                checked = self.checked(path)
            except Refused:
                answers.append(FileDownloadResponse(path=path, error=PERMISSION_DENIED))
                continue
            (answer,) = super().download_files([checked])
            answers.append(
                FileDownloadResponse(path=path, content=answer.content, error=answer.error)
            )
        return answers

    # -- writes ---------------------------------------------------------------------------
    def write(self, file_path: str, content: str) -> WriteResult:
        try:
            path = self.checked(file_path, write=True)
        except Refused as exc:
            return WriteResult(error=str(exc))
        return super().write(path, content)

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        try:
            path = self.checked(file_path, write=True)
        except Refused as exc:
            return EditResult(error=str(exc))
        return super().edit(path, old_string, new_string, replace_all)

    def delete(self, file_path: str) -> DeleteResult:
        try:
            path = self.checked(file_path, write=True)
        except Refused as exc:
            return DeleteResult(error=str(exc))
        return super().delete(path)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Each file is checked like a write (a refusal is the protocol's
        `permission_denied`); answers in the order asked."""
        answers: list[FileUploadResponse] = []
        for path, content in files:
            try:
                checked = self.checked(path, write=True)
            except Refused:
                answers.append(FileUploadResponse(path=path, error=PERMISSION_DENIED))
                continue
            (answer,) = super().upload_files([(checked, content)])
            answers.append(FileUploadResponse(path=path, error=answer.error))
        return answers
