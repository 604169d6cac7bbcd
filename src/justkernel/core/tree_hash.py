"""The identity of a candidate's source: one SHA-256 over its editable files.

The workspace (what a team edits), the toolchains (what ran) and the evaluation clients (what
was submitted) must compute the same hash from the same files, so it lives at the bottom tier.
"""

from __future__ import annotations

import hashlib


def editable_tree_sha256(files: dict[str, bytes]) -> str:
    """SHA-256 over sorted (path, content) pairs: the identity of a candidate's source."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        digest.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()
