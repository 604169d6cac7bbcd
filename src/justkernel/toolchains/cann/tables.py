"""Reading the CSV files CANN's profiler writes, tolerant of how they vary between versions.

msprof's CSVs differ by version and mode: a UTF-8 BOM, columns in another order, extra
columns, a trailing comma that makes an empty last column, quoted values with commas inside,
`N/A` for a figure that does not apply. Readers here look columns up by name (case and
surrounding spaces ignored) and fail with the file and the missing column named, so a format
change shows up as a clear error instead of a wrong number.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MISSING_VALUES = frozenset({"", "n/a", "na", "none", "null", "-", "--"})


class CannParseError(ValueError):
    """A profiler output file is missing, malformed or lacks a column; the message names it."""


def _key(name: str) -> str:
    return " ".join(name.replace("\ufeff", "").strip().lower().split())


@dataclass(frozen=True)
class Row:
    """One data row with its 1-based line number (header = line 1) for error messages."""

    path: Path
    line: int
    cells: dict[str, str]  # normalized column name -> raw text

    def text(self, column: str) -> str:
        return self.cells.get(_key(column), "").strip()

    def optional_number(self, column: str) -> float | None:
        """A finite float, or None for an empty or N/A cell (or a column the file lacks)."""
        raw = self.text(column)
        if raw.lower() in MISSING_VALUES:
            return None
        try:
            value = float(raw)
        except ValueError:
            raise CannParseError(
                f"{self.path}: line {self.line}: {column!r} is {raw!r}, not a number"
            ) from None
        if not math.isfinite(value):
            raise CannParseError(f"{self.path}: line {self.line}: {column!r} is {raw!r}")
        return value

    def number(self, column: str) -> float:
        value = self.optional_number(column)
        if value is None:
            raise CannParseError(f"{self.path}: line {self.line}: {column!r} is empty")
        return value

    def optional_integer(self, column: str) -> int | None:
        value = self.optional_number(column)
        if value is not None and value != int(value):
            raise CannParseError(
                f"{self.path}: line {self.line}: {column!r} is {value}, not a whole number"
            )
        return None if value is None else int(value)

    def integer(self, column: str) -> int:
        value = self.optional_integer(column)
        if value is None:
            raise CannParseError(f"{self.path}: line {self.line}: {column!r} is empty")
        return value

    def has(self, column: str) -> bool:
        return _key(column) in self.cells


def read_table(path: Path, required: Sequence[str]) -> list[Row]:
    """Rows of a CSV file whose header must contain every `required` column."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CannParseError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise CannParseError(f"{path}: not UTF-8 text ({exc.reason})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None or not any(cell.strip() for cell in header):
        raise CannParseError(f"{path}: empty file, no header")
    names = [_key(h) for h in header]
    missing = [c for c in required if _key(c) not in names]
    if missing:
        shown = ", ".join(repr(h.strip()) for h in header if h.strip())
        raise CannParseError(
            f"{path}: missing column {', '.join(repr(c) for c in missing)} (found: {shown})"
        )
    return list(_rows(path, names, reader))


def _rows(path: Path, names: list[str], reader: Iterator[list[str]]) -> Iterator[Row]:
    for offset, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue  # blank line
        # A row longer than the header (a stray trailing comma) keeps its named cells only.
        yield Row(path, offset, {n: c for n, c in zip(names, cells, strict=False) if n})
