"""One row mapping for every repository: a SQLAlchemy Core row becomes a frozen dataclass
record, and a record becomes the dict the API and the agents see, through the same two rules.

Each record declares only what differs from its columns (`PUBLIC`: a field's outside name, or
None to keep it inside; `SPREAD`: a dict field whose keys join the outside dict last). The
field types say how a column value is read back (a path, a bool from SQLite's integer, a JSON
object copied, a status enum), so no repository writes a `_row()` or `to_dict()` of its own.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self


@functools.cache
def _readers(cls: type) -> tuple[tuple[str, Any], ...]:
    """(field name, reader of a column value) for each field, from its resolved type."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _reader(hints[f.name])) for f in dataclasses.fields(cls))


@functools.lru_cache(maxsize=4096)
def _path(value: str) -> Path:
    """A path column's value as a Path; paths are immutable, so the same value shares one
    (building a Path costs more than the rest of a row)."""
    return Path(value)


@functools.cache
def _positions(cls: type, columns: tuple[str, ...]) -> tuple[tuple[str, int, Any], ...]:
    """(field, position in a row of these columns, reader) for each field with a column."""
    where = {column: index for index, column in enumerate(columns)}
    return tuple((name, where[name], read) for name, read in _readers(cls) if name in where)


def _reader(hint: Any) -> Any:
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        hint = args[0] if len(args) == 1 else Any
    base = typing.get_origin(hint) or hint
    if base is typing.Literal:
        base = str
    if base is dict:
        convert: Any = dict
    elif base is Path:
        convert = _path
    elif base is bool or (isinstance(base, type) and issubclass(base, enum.Enum)):
        convert = base
    else:
        return None  # taken as the driver gives it
    if optional:
        return lambda value: None if value is None else convert(value)
    if base is dict:
        return lambda value: dict(value or {})
    return convert


@dataclasses.dataclass(frozen=True)
class Record:
    """Base of the store's records: `from_row` reads one, `to_dict` shows one."""

    PUBLIC: ClassVar[Mapping[str, str | None]] = {}
    SPREAD: ClassVar[str | None] = None

    @classmethod
    def from_row(cls, row: Any) -> Self:
        """The record of a Core row (or any mapping): each field from its column; a field
        without a column keeps its default."""
        return cls.from_rows([row])[0]

    @classmethod
    def from_rows(cls, rows: Sequence[Any]) -> list[Self]:
        """The records of rows of one result (or of mappings): which field is read from
        which position, and how, is worked out once per result's columns, not per field of
        every row (a 100-team list read paid more for that than for its query)."""
        if not rows:
            return []
        first = rows[0]
        if not hasattr(first, "_fields"):  # plain mappings: by name
            return [
                cls(**{n: r(m[n]) if r else m[n] for n, r in _readers(cls) if n in m}) for m in rows
            ]
        plan = _positions(cls, tuple(first._fields))
        return [
            cls(**{n: r(row[i]) if r is not None else row[i] for n, i, r in plan}) for row in rows
        ]

    def to_dict(self) -> dict[str, Any]:
        """Every field under its outside name, in field order; the spread dict last."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == self.SPREAD:
                continue
            public = self.PUBLIC.get(f.name, f.name)
            if public is not None:
                out[public] = getattr(self, f.name)
        if self.SPREAD is not None:
            out.update(getattr(self, self.SPREAD))
        return out
