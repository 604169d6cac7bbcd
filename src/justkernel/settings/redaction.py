"""Scrubs known secret values from text before it reaches a log, an event or an export.

The secrets store registers every value it stores or decrypts; `scrub` replaces each with `***`.
`RedactingFilter` applies it to every log record of the process.
"""

from __future__ import annotations

import logging
import threading

_known: set[str] = set()
_lock = threading.Lock()
_MIN_LENGTH = 6  # shorter values would scrub ordinary words


def register(value: str) -> None:
    if len(value) >= _MIN_LENGTH:
        with _lock:
            _known.add(value)


def scrub(text: str) -> str:
    with _lock:
        values = sorted(_known, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, "***")
    return text


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
