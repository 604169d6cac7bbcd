"""Which relative paths may name a file of a team's tree: one rule for every way in.

Paths come from parties the lab does not trust: the team's model (file tools), an outside A2A
agent (candidate files), a judge client (bundles) and candidates other teams froze. Each must
be relative and made of plain parts, and must name nothing git reads as its own: a `.git` at
any depth is a repository whose configuration runs commands (`core.fsmonitor`, hooks) when a
git command of the lab walks the tree, and `.gitmodules`, `.gitattributes` and `.gitignore`
steer what git does with it. Filesystems fold names before git sees them (case; trailing dots
and spaces, streams and 8.3 short names on NTFS; ignorable code points on HFS+), so a part is
folded the same way before it is compared.
"""

from __future__ import annotations

import re

GIT_NAMES = frozenset({".git", ".gitmodules", ".gitattributes", ".gitignore"})
_IGNORABLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_SHORT_NAME = re.compile(r"^(git|gitmod)~\d+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")
RELATIVE = "paths are relative to the project, without '..' or '.'"
GIT_REFUSED = (
    "git internals are not accessible: no part of a path may be '.git' or another name git "
    "reads as its own (.gitmodules, .gitattributes, .gitignore)"
)


def is_git_name(part: str) -> bool:
    """True when a filesystem or git could take `part` for one of git's own names."""
    folded = _IGNORABLE.sub("", part).split(":", 1)[0].rstrip(". ").lower()
    return folded in GIT_NAMES or _SHORT_NAME.match(folded) is not None


def relpath_problem(rel: object) -> str | None:
    """Why `rel` cannot name a file of a team's tree, or None when it is a plain relative
    POSIX path. The reason does not repeat the path, so each caller shows it its own way."""
    if not isinstance(rel, str) or not rel:
        return "not a file path"
    if _CONTROL.search(rel):
        return "invalid characters in the path"
    if rel.startswith("/"):
        return f"absolute paths are not allowed; {RELATIVE}"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return RELATIVE
    if any(is_git_name(part) for part in parts):
        return GIT_REFUSED
    return None
