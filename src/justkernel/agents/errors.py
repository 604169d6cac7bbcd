"""What went wrong with a model provider, in the few kinds the scheduler acts on.

The scheduler pauses dispatch for a provider on `auth`, `balance` and `config` (retrying cannot
help until a human fixes the key or tops up the account), backs off on `rate_limit` and
`transient`, and hands `bad_request` back to the team. Every message is scrubbed of known secret
values: some providers echo the key they were sent in their 401 message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import openai

from justkernel.settings import redaction

ErrorKind = Literal[
    "auth", "balance", "rate_limit", "transient", "bad_request", "config", "unknown"
]

PAUSING_KINDS: frozenset[ErrorKind] = frozenset({"auth", "balance", "config"})

_MAX_DETAIL = 300
# Lower-cased fragments that mean "the account has no money or quota left", whatever the status:
# OpenAI sends 429 insufficient_quota, DeepSeek 402 "Insufficient Balance", DashScope "Arrearage".
_BALANCE_MARKERS = (
    "insufficient balance",
    "insufficient_balance",
    "insufficient_quota",
    "insufficient quota",
    "exceeded your current quota",
    "quota exceeded",
    "arrearage",
    "billing",
    "payment required",
    "account is not in good standing",
)
_AUTH_MARKERS = ("invalid_api_key", "invalid api key", "incorrect api key", "invalidapikey")
_SUMMARY: dict[ErrorKind, str] = {
    "auth": "authentication failed; check the API key",
    "balance": "the account has no balance or quota left",
    "rate_limit": "rate limited by the provider",
    "transient": "the provider is unavailable or slow",
    "bad_request": "the provider rejected the request",
    "config": "the model preset is not usable",
    "unknown": "unexpected error",
}


class ProviderConfigError(Exception):
    """A preset cannot be turned into a chat model (missing key, wrong provider, no URL)."""


@dataclass(frozen=True, slots=True)
class ProviderError:
    """A classified provider failure; `message` is safe to log, store and show."""

    kind: ErrorKind
    message: str
    status: int | None = None
    code: str | None = None

    @property
    def pauses_dispatch(self) -> bool:
        """True when retrying cannot help until a human acts (key, balance, preset)."""
        return self.kind in PAUSING_KINDS


class ModelCallFailed(RuntimeError):
    """A model call failed: the classified, scrubbed error, and nothing of the SDK's.

    Raised in place of the provider SDK's exception (`from None`, and with no context kept),
    because whatever leaves the agent is written to disk: LangGraph stores a failed node's
    exception as the checkpoint's `__error__` write (its `repr`), and an SDK exception carries
    the provider's response, which some providers fill with the key they were sent."""

    def __init__(self, error: ProviderError, provider: str) -> None:
        super().__init__(f"model call to {provider} failed ({error.kind}): {error.message}")
        self.error = error
        self.provider = provider

    @classmethod
    def of(cls, exc: BaseException, provider: str) -> ModelCallFailed:
        """The scrubbed stand-in of `exc`. Raise it outside the `except` block that caught
        `exc`, so that Python does not chain `exc` to it as its context."""
        return cls(classify_error(exc), provider)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and its causes: harness layers wrap the provider's exception."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _body_error(body: object) -> tuple[str | None, str | None]:
    """(message, code) from an OpenAI-style error body, if it has one."""
    if isinstance(body, dict):
        inner: Any = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
            code = inner.get("code") or inner.get("type")
            return (
                str(message) if message is not None else None,
                str(code) if code is not None else None,
            )
        if isinstance(inner, str):
            return inner, None
    return None, None


def _detail(text: str) -> str:
    text = redaction.scrub(" ".join(text.split()))
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


def _kind_for_status(status: int, text: str) -> ErrorKind:
    lowered = text.lower()
    if status == 402 or any(m in lowered for m in _BALANCE_MARKERS):
        return "balance"
    if status in (401, 403) or any(m in lowered for m in _AUTH_MARKERS):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status in (408, 409) or status >= 500:
        return "transient"
    return "bad_request"


def _from_status_error(exc: openai.APIStatusError) -> ProviderError:
    message, code = _body_error(exc.body)
    if message is None:
        message = exc.message
    kind = _kind_for_status(exc.status_code, f"{message} {code or ''}")
    return ProviderError(kind, _detail(message), exc.status_code, code and redaction.scrub(code))


def classify_error(exc: BaseException) -> ProviderError:
    """Sort an exception from a model call into the kinds the scheduler acts on."""
    for item in _chain(exc):
        if isinstance(item, ModelCallFailed):
            return item.error
        if isinstance(item, ProviderConfigError):
            return ProviderError("config", _detail(str(item)))
        if isinstance(item, openai.APIStatusError):
            return _from_status_error(item)
        if isinstance(item, openai.APITimeoutError | TimeoutError):
            return ProviderError("transient", "request timed out")
        if isinstance(item, openai.APIConnectionError | ConnectionError):
            return ProviderError("transient", _detail(f"connection failed: {item}"))
        if isinstance(item, openai.APIResponseValidationError | json.JSONDecodeError):
            return ProviderError("bad_request", _detail(f"malformed response: {item}"))
    return ProviderError("unknown", _detail(f"{type(exc).__name__}: {exc}"))


def describe(error: ProviderError, preset: str) -> str:
    """One line for people: which preset, what kind, and the provider's own words."""
    status = f" (HTTP {error.status})" if error.status is not None else ""
    return f"{preset}: {_SUMMARY[error.kind]}{status}: {error.message}"
