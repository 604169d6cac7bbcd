"""A candidate's source tree: snapshot it, hash its editable files, check the path policy.

The tree hash covers only the editable files (sorted relative paths + contents). That is enough
to name what ran because a tree is only ever built after `check_tree` proved every other file
identical to the operator's template. Folders that are not part of a candidate (`.git`, a local
`build/`) are neither copied nor checked.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from justkernel.core.tree_hash import editable_tree_sha256
from justkernel.operators import OperatorDefinition

IGNORED_DIRS = (".git", "build", "build_out")  # top-level folders never part of a candidate
MAX_FILE_BYTES = 1 << 20  # an editable source file larger than this is refused
MAX_TREE_FILES = 2000  # a snapshot refuses trees larger than this (not a project)
MAX_TREE_BYTES = 64 << 20


class CandidateError(ValueError):
    """The folder is not an operator project at all (missing, not a folder, far too big)."""


@dataclass(frozen=True)
class TreeCheck:
    """Editable files with their SHA-256, the tree hash, and every policy problem found."""

    editable: dict[str, str]
    tree_hash: str
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk(root: Path) -> list[tuple[str, os.stat_result]]:
    """(relative POSIX path, lstat) of every entry below root, links not followed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            st = p.lstat()
            if stat.S_ISDIR(st.st_mode) and not p.is_symlink():
                continue
            out.append(((rel_dir / name).as_posix(), st))
    return sorted(out)


def template_files(definition: OperatorDefinition) -> dict[str, str]:
    """SHA-256 of every file of the operator's project template (the trusted reference)."""
    root = definition.project_dir
    return {rel: _sha256_file(root / rel) for rel, _ in _walk(root)}


def tree_hash(root: Path, rel_paths: list[str]) -> str:
    """The source hash of these files under `root` (see `editable_tree_sha256`): the one
    identity receipts, frozen candidates and judge bundles all share."""
    return editable_tree_sha256({rel: (root / rel).read_bytes() for rel in rel_paths})


def check_tree(root: Path, definition: OperatorDefinition) -> TreeCheck:
    """Classify every file: editable ones are hashed, everything else must equal the template.

    Symlinks and special files are refused anywhere (a link could make the compiler read a host
    file); so are extra files outside the editable paths and missing or changed template files.
    """
    root = Path(root)
    template = template_files(definition)
    problems: list[str] = []
    editable: dict[str, str] = {}
    seen: set[str] = set()
    for rel, st in _walk(root):
        seen.add(rel)
        access = definition.paths.access(rel)
        if not stat.S_ISREG(st.st_mode):
            kind = "symlink" if stat.S_ISLNK(st.st_mode) else "special file"
            problems.append(f"{rel}: {kind} not allowed in a candidate")
            continue
        if access == "editable":
            if st.st_size > MAX_FILE_BYTES:
                problems.append(f"{rel}: {st.st_size} bytes, larger than {MAX_FILE_BYTES}")
                continue
            editable[rel] = _sha256_file(root / rel)
        elif rel not in template:
            problems.append(f"{rel}: extra {access} file outside the editable paths")
        elif _sha256_file(root / rel) != template[rel]:
            problems.append(f"{rel}: {access} file differs from the operator template")
    for rel in sorted(set(template) - seen):
        if definition.paths.access(rel) != "editable":
            problems.append(f"{rel}: {definition.paths.access(rel)} file is missing")
    for required in (definition.build.kernel_source, definition.build.tiling_source):
        if required not in editable and not any(p.startswith(f"{required}:") for p in problems):
            problems.append(f"{required}: missing")
    digest = tree_hash(root, list(editable))
    return TreeCheck(editable=editable, tree_hash=digest, problems=tuple(problems))


def looks_like_project(path: Path, definition: OperatorDefinition) -> None:
    """Raise CandidateError unless `path` is a folder holding the kernel source."""
    path = Path(path)
    if not path.exists():
        raise CandidateError(f"{path}: no such folder")
    if not path.is_dir():
        raise CandidateError(f"{path}: not a folder")
    kernel = path / definition.build.kernel_source
    if not kernel.is_file() and not kernel.is_symlink():
        raise CandidateError(
            f"{path}: not a {definition.operator.display_name} project "
            f"(no {definition.build.kernel_source})"
        )


def snapshot_tree(src: Path, dest: Path, definition: OperatorDefinition) -> None:
    """Copy the candidate into `dest` (must not exist), world-readable for the sandbox.

    Symlinks are copied as links (never followed) so `check_tree` refuses them; special files
    are skipped the same way. Absurdly large trees raise CandidateError.
    """
    looks_like_project(src, definition)
    entries = _walk(Path(src))
    if len(entries) > MAX_TREE_FILES:
        raise CandidateError(f"{src}: {len(entries)} files, more than {MAX_TREE_FILES}")
    total = sum(st.st_size for _, st in entries if stat.S_ISREG(st.st_mode))
    if total > MAX_TREE_BYTES:
        raise CandidateError(f"{src}: {total} bytes of files, more than {MAX_TREE_BYTES}")
    dest.mkdir(mode=0o755)
    for rel, st in entries:
        target = dest / rel
        _make_parents(dest, target.parent)
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(Path(src) / rel), target)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(Path(src) / rel, target, follow_symlinks=False)
            os.chmod(target, 0o644)


def _make_parents(root: Path, folder: Path) -> None:
    missing = []
    while folder != root and not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for d in reversed(missing):
        d.mkdir(mode=0o755)
        os.chmod(d, 0o755)
