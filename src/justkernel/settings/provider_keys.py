"""Provider keys from the environment: `JUSTKERNEL_PROVIDER_KEYS`, a JSON object provider → key.

Users keep their keys in a local `.env` (never committed) instead of typing them into the
dashboard. A key given here is used by a preset that has no stored key, and only where that
provider's key may go, as a stored key may go only to the address it was entered for: a plain
`"openai": "sk-..."` goes to the provider's own addresses (its default base URL and the base URLs
of its shipped presets in `models.toml`), never to a URL a local preset (or a hostile client
saving one) chose; `"openai_compatible": {"key": "...", "base_url": "http://..."}` names the
one address its key goes to. Values are kept as `Secret`s and registered with `redaction`, so
they are scrubbed like stored secrets; no error message ever repeats one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from justkernel.settings import redaction
from justkernel.settings.secrets import Secret

ENV_NAME = "JUSTKERNEL_PROVIDER_KEYS"
PROVIDERS = ("openai", "deepseek", "qwen", "openai_compatible")  # every provider that takes a key
MAX_KEY = 4096  # as the dashboard's key field


def _address(url: str) -> str:
    return url.rstrip("/")


@dataclass(frozen=True)
class _Entry:
    secret: Secret
    base_url: str | None  # None: the provider's own addresses


class ProviderKeys:
    """The parsed variable: which provider has a key here, and where that key may go."""

    def __init__(self, entries: Mapping[str, _Entry] | None = None) -> None:
        self._entries = dict(entries or {})

    @classmethod
    def parse(cls, text: str | None) -> ProviderKeys:
        """The keys in `text` (empty: none); ValueError naming the problem, never a value."""
        if text is None or not text.strip():
            return cls()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{ENV_NAME} is not valid JSON ({exc.msg} at character {exc.pos}); "
                'write an object such as {"openai": "sk-...", "deepseek": "sk-..."}'
            ) from None
        if not isinstance(data, dict):
            raise ValueError(f"{ENV_NAME} must be a JSON object of provider → key")
        entries = {}
        for provider, value in data.items():
            entries[provider] = _entry(provider, value)
        for entry in entries.values():
            redaction.register(entry.secret.reveal())
        return cls(entries)

    @property
    def providers(self) -> list[str]:
        return sorted(self._entries)

    def for_address(
        self, provider: str, base_url: str, own_addresses: frozenset[str]
    ) -> Secret | None:
        """The key for a request of `provider` to `base_url`, if one may go there:
        `own_addresses` are the provider's own base URLs (default and shipped presets')."""
        entry = self._entries.get(provider)
        if entry is None:
            return None
        allowed = {entry.base_url} if entry.base_url else own_addresses
        return entry.secret if _address(base_url) in {_address(a) for a in allowed} else None

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __repr__(self) -> str:
        return f"ProviderKeys({', '.join(self.providers)})"

    __str__ = __repr__


def _entry(provider: object, value: object) -> _Entry:
    where = f"{ENV_NAME}[{provider!r}]"
    if provider not in PROVIDERS:  # named only when it looks like a name, not a pasted key
        shown = repr(provider) if re.fullmatch(r"[a-z_]{1,32}", str(provider)) else "name"
        raise ValueError(f"{ENV_NAME}: unknown provider {shown} (one of {', '.join(PROVIDERS)})")
    base_url = None
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"key", "base_url"})
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)} (key, base_url)")
        base_url = value.get("base_url")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"{where}.base_url must be a URL starting with http:// or https://")
        value = value.get("key")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: the key must be a non-empty string")
    if len(value) > MAX_KEY or any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError(f"{where}: the key must be one line of at most {MAX_KEY} characters")
    if provider == "openai_compatible" and base_url is None:
        raise ValueError(
            f"{where}: an openai_compatible key has no address of its own; give "
            '{"key": "...", "base_url": "http://host:port/v1"}'
        )
    return _Entry(Secret(f"{ENV_NAME}:{provider}", value), base_url)
