"""The Judger's independent review of a frozen candidate.

It trusts nothing the team says: it rebuilds the project from the frozen bytes and the
operator's template, recomputes the source hash and checks it against the receipt, re-runs the
tree policy (forbidden files unchanged, nothing extra), and reads the diff for what the rules
forbid. An optional model reviewer reads the diff too; rules always run. The project's untouched
template is rejected too: it tells nothing new, and submitting it would spend one of the day's
few official submissions (a team's own measurement of it is never frozen, `simulate_kernel`
answers it as the baseline; this guards every other way a candidate comes in).
"""

from __future__ import annotations

import difflib
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from justkernel.core.receipts import Receipt
from justkernel.operators import OperatorDefinition
from justkernel.operators.project_files import is_untouched_template
from justkernel.toolchains.tree import check_tree

MAX_SOURCE_BYTES = 256 * 1024
FORBIDDEN_PATTERNS = {
    r"\basm\b|__asm__": "inline assembly",
    r"__attribute__\s*\(\(\s*constructor": "a constructor",
    r"\bsyscall\s*\(": "a raw system call",
    r"#\s*include\s*<(sys/|unistd\.h|fcntl\.h|dlfcn\.h|pthread\.h)": "an OS header",
    r"\b(fopen|open|getenv|system|popen|dlopen|mmap|fork|clock_gettime)\s*\(": "an OS call",
}


@dataclass(frozen=True)
class Review:
    verdict: str  # accepted | rejected
    reasons: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    reviewer: str = "rules"

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "notes": list(self.notes),
            "reviewer": self.reviewer,
        }


def rebuild(files: dict[str, bytes], operator: OperatorDefinition, dest: Path) -> Path:
    """The candidate project: the template with the frozen editable files laid over it."""
    shutil.copytree(operator.project_dir, dest)
    for rel, data in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def _baseline(operator: OperatorDefinition, rel: str) -> bytes | None:
    """The template's bytes for `rel`, or None when the template has no such file (or the path
    would leave the template folder)."""
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    target = operator.project_dir / path
    return target.read_bytes() if target.is_file() and not target.is_symlink() else None


UNTOUCHED = (
    "the project's untouched template (every editable file equals the baseline): not submitted, "
    "it would spend an official submission on nothing new"
)


def candidate_diffs(files: dict[str, bytes], operator: OperatorDefinition) -> dict[str, str]:
    """Unified diffs of the frozen files against the operator's template, by path: only the
    files that differ, a new file against /dev/null. What a reviewer reads instead of sources."""
    diffs: dict[str, str] = {}
    for rel, data in sorted(files.items()):
        old = _baseline(operator, rel)
        if old == data:
            continue
        before = "/dev/null" if old is None else f"a/{rel}"
        old_text = "" if old is None else old.decode("utf-8", "replace")
        new_text = data.decode("utf-8", "replace")
        text = "".join(difflib.unified_diff(_lines(old_text), _lines(new_text), before, f"b/{rel}"))
        diffs[rel] = text or f"--- {before}\n+++ b/{rel}\n(only the final newline differs)\n"
    return diffs


def candidate_diff(files: dict[str, bytes], operator: OperatorDefinition) -> str:
    """One unified diff of every changed file (see `candidate_diffs`)."""
    return "".join(candidate_diffs(files, operator).values())


def review_candidate(
    files: dict[str, bytes],
    source_sha256: str,
    receipt: Receipt | None,
    operator: OperatorDefinition,
    *,
    allow_unverified_precision: bool = False,
) -> Review:
    reasons: list[str] = []
    notes: list[str] = []
    if is_untouched_template(files, operator):
        reasons.append(UNTOUCHED)
    if receipt is None:
        reasons.append("no receipt for this source")
    elif receipt.source_sha256 != source_sha256:
        reasons.append("the receipt belongs to another source")
    elif receipt.status != "measured":
        if allow_unverified_precision and receipt.compile is not None and receipt.compile.ok:
            notes.append(f"local precision not fully verified ({receipt.status})")
        else:
            reasons.append(f"the receipt is {receipt.status}, not measured")
    with tempfile.TemporaryDirectory(prefix="jk-review-") as tmp:
        project = rebuild(files, operator, Path(tmp) / "project")
        tree = check_tree(project, operator)
    if tree.tree_hash != source_sha256:
        reasons.append("the frozen bytes do not hash to the candidate's source SHA-256")
    reasons += [f"tree: {p}" for p in tree.problems]
    for rel, data in sorted(files.items()):
        if operator.paths.access(rel) != "editable":
            reasons.append(f"{rel}: not an editable path")
        if len(data) > MAX_SOURCE_BYTES:
            reasons.append(f"{rel}: larger than {MAX_SOURCE_BYTES // 1024} KiB")
        text = data.decode("utf-8", "replace")
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
        for pattern, what in FORBIDDEN_PATTERNS.items():
            if re.search(pattern, code):
                reasons.append(f"{rel}: uses {what}")
    return Review("rejected" if reasons else "accepted", tuple(reasons), tuple(notes))
