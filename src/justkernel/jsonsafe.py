"""JSON from untrusted hands (HTTP bodies, imported bundles, judge requests).

`json.loads` recurses once per nesting level: a body of ten thousand `[` ends in a
`RecursionError` (a 500), and a few hundred levels pass the parser only to make the next
recursive walk (pydantic, a redactor, a renderer) fail instead. Every parser of outside JSON
calls `loads_bounded`, which turns both into a plain `ValueError` with a message a client can
act on, so the caller answers 400 and nothing deeper ever sees a pathological document.
"""

from __future__ import annotations

import json
import re

DEFAULT_MAX_DEPTH = 64


def loads_bounded(data: bytes | str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> object:
    """Parse `data` as JSON; `ValueError` if it is not JSON or nests deeper than `max_depth`.

    Depth counts containers: `1` and `{}` are depth 0 and 1, `[[1]]` is depth 2.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(_too_deep(max_depth)) from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid JSON: not {exc.encoding} text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if depth_exceeds(value, max_depth):
        raise ValueError(_too_deep(max_depth))
    escape = _SURROGATE_ESCAPE if isinstance(data, str) else _SURROGATE_ESCAPE_BYTES
    if escape.search(data):
        _refuse_lone_surrogates(value)
    return value


# `\ud800` alone is legal JSON but not text (RFC 7493): it cannot be encoded, so it ends as a
# UnicodeEncodeError (a 500) wherever the string is compared, stored or written. Only an escape
# can carry one (raw surrogate bytes are invalid UTF-8), so the walk runs only when one appears.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPE_BYTES = re.compile(_SURROGATE_ESCAPE.pattern.encode())


def _refuse_lone_surrogates(value: object) -> None:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "the JSON holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape outside a "
            "pair); strings must be Unicode text"
        ) from None


def depth_exceeds(value: object, max_depth: int) -> bool:
    """Whether `value` nests lists/dicts deeper than `max_depth`: level by level, without
    recursing (about as fast as the parse itself; a recursive walk would meet the same
    RecursionError this module exists to avoid)."""
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        below: list[object] = []
        for node in level:
            for child in node.values() if type(node) is dict else node:  # type: ignore[attr-defined]
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
        level = below
    return False


def _too_deep(max_depth: int) -> str:
    return f"the JSON nests deeper than {max_depth} levels of arrays and objects"
