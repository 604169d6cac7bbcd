"""The head of a compiler log as a model reads it: the errors first, then their context.

g++ prints an error's context before the error itself: the include chain ("In file included
from ...") and, for an error deep in a template, the instantiation chain ("In instantiation of
...", "required from ..."), then the `error:` line, then its notes ("candidate: ..."). An Ascend
C kernel compiled for two dtypes repeats all of it once per dtype. A head of the first lines in
the compiler's order is then mostly context, and the second error (or the first, below a long
include chain) is cut off. So the errors come first, each with its file:line and source excerpt,
then every other line in the compiler's order, and the cap applies after that ordering.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# `file:line[:col]: error: ...`, `fatal error:`, gcc's driver and the linker's own errors
ERROR = re.compile(r"(?:^|: )(?:fatal )?error: |undefined reference to |^collect2: ")
CONTEXT_MARK = "-- context and notes, in the compiler's order --"
MAX_LINE_CHARS = 400  # a template's "In instantiation of ..." line can run to kilobytes


def _blocks(lines: list[str]) -> list[list[str]]:
    """Lines grouped by diagnostic: a line that starts with blank space (a source excerpt,
    its caret line, an include chain's "from ..." line) belongs to the line before it."""
    blocks: list[list[str]] = []
    for line in lines:
        if blocks and line[:1].isspace():
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} [... {len(line) - MAX_LINE_CHARS} more characters]"


def diagnostics_head(log: str, limit: int, skip: Iterable[str] = ("$ ",)) -> list[str]:
    """At most `limit` lines of `log` (lines starting with one of `skip`, such as the logged
    command lines, left out): every error block first (an identical repeat, as another
    dtype's build prints it, once), then a marker and the rest in the compiler's order."""
    prefixes = tuple(skip)
    lines = [line for line in log.splitlines() if not (prefixes and line.startswith(prefixes))]
    errors: list[str] = []
    context: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for block in _blocks(lines):
        if not ERROR.search(block[0]):
            context += block
        elif (key := tuple(block)) not in seen:
            seen.add(key)
            errors += block
    ordered = errors + ([CONTEXT_MARK] if errors and context else []) + context
    return [_clip(line) for line in ordered[:limit]]
