"""Scrubs known secret values from text before it reaches a log, an event or an export.

Known values are of two kinds. The secrets store registers every value it stores or decrypts
(and the settings their API token); and the process environment's own secrets (variables named
`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, ... such as `JUSTKERNEL_API_TOKEN` or
`OPENAI_API_KEY`; a JSON object's string values too, as in `JUSTKERNEL_PROVIDER_KEYS`) are looked
up again whenever the environment changed, so a key exported after start-up counts too. `scrub`
replaces each with `MARKER`; `scrub_bytes` does the same on raw bytes (a kernel's log need not be
UTF-8). `RedactingFilter` applies it to every log record of the process.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MARKER = "***"
_known: set[str] = set()
_lock = threading.Lock()
_MIN_LENGTH = 6  # shorter values would scrub ordinary words
_SECRET_NAME = re.compile(r"(KEYS?|TOKENS?|SECRETS?|PASSWORDS?|PASSWD|PASSPHRASE|CREDENTIALS?)$")


def register(value: str | None) -> None:
    if value is not None and len(value) >= _MIN_LENGTH:
        with _lock:
            _known.add(value)


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (by naming convention)."""
    return bool(_SECRET_NAME.search(name.upper()))


# every event, log line and checkpoint is scrubbed: the value list (and its UTF-8 bytes) is
# rebuilt only when the environment or the registered values changed, not once per call
@dataclass(frozen=True, slots=True)
class _Known:
    environment: dict[Any, Any]  # a copy of the environment as it was when built
    registered: int  # how many values were registered then (they are only ever added)
    values: list[str]  # longest first
    raw: list[bytes]  # the same, UTF-8


_cached: _Known | None = None


def _environment() -> dict[Any, Any]:
    """The process environment's own mapping, to compare with a copy in one C-level dict
    comparison (`os.environ` keeps it in `_data`; iterating `os.environ` decodes every variable
    in Python, which cost more than the scrubbing it guarded)."""
    data = getattr(os.environ, "_data", None)
    return data if isinstance(data, dict) else dict(os.environ)


def _current() -> _Known:
    global _cached
    environment = _environment()
    with _lock:
        cached = _cached
        if (
            cached is not None
            and cached.registered == len(_known)
            and cached.environment == environment
        ):
            return cached
        from_env = {
            part
            for k, v in os.environ.items()
            if is_secret_name(k)
            for part in (v, *_json_strings(v))
            if len(part) >= _MIN_LENGTH
        }
        values = sorted(_known | from_env, key=len, reverse=True)
        _cached = _Known(dict(environment), len(_known), values, [v.encode() for v in values])
        return _cached


def _values() -> list[str]:
    """Every known secret value, longest first (so a value containing another goes whole)."""
    return _current().values


def _json_strings(value: str) -> list[str]:
    """The string values of a JSON object, or the `key` of a nested object (`{"key": ...,
    "base_url": ...}`: its address is no secret): a variable holding several secrets, each of
    which must be scrubbed on its own."""
    if not value.lstrip().startswith("{"):
        return []
    try:
        data = json.loads(value)
    except ValueError:
        return []
    found: list[str] = []
    for item in data.values() if isinstance(data, dict) else ():
        part = item.get("key") if isinstance(item, dict) else item
        if isinstance(part, str):
            found.append(part)
    return found


def scrub(text: str) -> str:
    for value in _values():
        if value in text:
            text = text.replace(value, MARKER)
    return text


def scrub_bytes(data: bytes) -> bytes:
    for raw in _current().raw:
        if raw in data:
            data = data.replace(raw, MARKER.encode())
    return data


def mask_bytes(data: bytes) -> bytes:
    """`data` with each known secret value's bytes replaced by as many `*`: the length stays,
    so a length-prefixed encoding (a checkpoint's msgpack) stays valid."""
    for raw in _current().raw:
        if raw in data:
            data = data.replace(raw, b"*" * len(raw))
    return data


class RedactingFilter(logging.Filter):
    """Renders the record's message once, scrubbed, so arguments cannot leak a secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = scrub(message)
        if cleaned != message or record.args:
            record.msg = cleaned
            record.args = None
        return True


def install_log_redaction() -> None:
    """Attach the filter to every handler of the root logger (call after logging is set up)."""
    root = logging.getLogger()
    for handler in root.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
