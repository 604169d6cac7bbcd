"""Model presets: public ones from `models.toml`, the user's own from `models.local.toml`.

Presets never carry credentials, and never choose whose credential they use: the lab decides.
A shipped preset uses its provider's key (`qwen_api_key`), a local preset the key stored with
it (`preset:<name>:api_key`); with no stored key, the key `JUSTKERNEL_PROVIDER_KEYS` gives for
the preset's address (`environment_key`). Whatever `api_key_secret` a local file names is
ignored, so a preset saved by a hostile client (or a file written before this rule) cannot send
the judge token or another provider's key to a URL of its choosing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from justkernel.paths import public_models_file
from justkernel.settings.config import ConfigError
from justkernel.settings.provider_keys import ProviderKeys
from justkernel.settings.secrets import Secret

Provider = Literal["offline", "openai", "deepseek", "qwen", "openai_compatible"]
# Bounds a preset's numbers must keep (issue #16: 10**20 was accepted). The largest output
# limit the providers document is 128,000 tokens (OpenAI's GPT-5 family; DeepSeek's reasoner
# 64K, Qwen3 below that); 1,000,000 leaves room for the next generation and still catches a
# typo. The largest documented context window is 10,000,000 tokens (Qwen-Long; GPT-4.1 and
# Qwen-Plus 1M).
MAX_OUTPUT_TOKENS = 1_000_000
MAX_CONTEXT_WINDOW = 10_000_000
MAX_DISPLAY_NAME = 80  # a label in tables, dropdowns and team cards
MAX_DESCRIPTION = 500
# where a provider's requests go when a preset sets no base_url
DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com/v1",
}


class ModelPreset(BaseModel):
    """One model connection a team (or the Judger) can use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    provider: Provider
    model: str = Field(min_length=1, max_length=200)
    display_name: str | None = Field(default=None, max_length=MAX_DISPLAY_NAME)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    base_url: str | None = None
    api_key_secret: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:-]{1,128}$")
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    max_output_tokens: int | None = Field(default=None, gt=0, le=MAX_OUTPUT_TOKENS)
    # the model's context window in tokens (prompt + output); the harness summarises older
    # history before a prompt outgrows it (`agents.summarization`); None: a default applies
    context_window: int | None = Field(default=None, gt=0, le=MAX_CONTEXT_WINDOW)
    input_price_per_mtok: float | None = Field(default=None, ge=0)
    output_price_per_mtok: float | None = Field(default=None, ge=0)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @property
    def priced(self) -> bool:
        return self.input_price_per_mtok is not None and self.output_price_per_mtok is not None


def preset_secret_name(name: str) -> str:
    """The secret that holds a local preset's own key."""
    return f"preset:{name}:api_key"


def provider_secret_name(provider: str) -> str:
    """The one secret a shipped preset of `provider` may use."""
    return f"{provider}_api_key"


def provider_addresses(provider: str) -> frozenset[str]:
    """The provider's own base URLs: its default and those of its shipped presets (the
    repository's `models.toml`, never a local file): where a key given for the provider alone
    (`JUSTKERNEL_PROVIDER_KEYS`) may go."""
    urls = {DEFAULT_BASE_URLS[provider]} if provider in DEFAULT_BASE_URLS else set()
    shipped = _read_presets(public_models_file(), shipped=True).values()
    urls |= {p.base_url for p in shipped if p.provider == provider and p.base_url}
    return frozenset(url.rstrip("/") for url in urls)


def environment_key(preset: ModelPreset, keys: ProviderKeys | None) -> Secret | None:
    """The key `JUSTKERNEL_PROVIDER_KEYS` gives for the preset's address, if any: for a preset
    with no stored key (the caller asks the store first)."""
    if not keys or preset.provider == "offline":
        return None
    url = preset.base_url or DEFAULT_BASE_URLS.get(preset.provider)
    if url is None:
        return None
    return keys.for_address(preset.provider, url, provider_addresses(preset.provider))


def _own_key(preset: ModelPreset, shipped: bool, path: Path) -> ModelPreset:
    """The preset with the only key reference it may have."""
    if shipped:
        allowed = provider_secret_name(preset.provider)
        if preset.api_key_secret not in (None, allowed):
            raise ConfigError(
                f"{path}: models.{preset.name}.api_key_secret: a shipped preset may use only "
                f"its provider's key, {allowed!r}"
            )
        return preset
    own = None if preset.provider == "offline" else preset_secret_name(preset.name)
    return preset.model_copy(update={"api_key_secret": own})


def _read_presets(path: Path, *, shipped: bool = False) -> dict[str, ModelPreset]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    table = data.get("models", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [models] must be a table of presets")
    presets: dict[str, ModelPreset] = {}
    for name, body in table.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: models.{name} must be a table")
        try:
            presets[name] = _own_key(ModelPreset(name=name, **body), shipped, path)
        except ValidationError as exc:
            problems = "; ".join(
                f"models.{name}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors()
            )
            raise ConfigError(f"{path}: {problems}") from exc
    return presets


def load_model_presets(local_file: Path | None = None) -> dict[str, ModelPreset]:
    """Public presets overlaid by the user's local ones (a local one may replace a public one)."""
    presets = _read_presets(public_models_file(), shipped=True)
    if local_file is not None and local_file.is_file():
        presets.update(_read_presets(local_file))
    return presets


def shipped_preset_names() -> set[str]:
    """The presets the lab ships (`models.toml`): a local file may override one, never remove it."""
    return set(_read_presets(public_models_file(), shipped=True))


def delete_local_preset(local_file: Path, name: str) -> bool:
    """Remove one preset from the local file, keeping the others (atomic replace); False when
    the file has no such preset. Its stored key is the caller's to delete."""
    existing = _read_presets(local_file) if local_file.is_file() else {}
    if existing.pop(name, None) is None:
        return False
    _write_local(local_file, existing)
    return True


def save_local_preset(local_file: Path, preset: ModelPreset) -> None:
    """Add or replace one preset in the local file, keeping the others; atomic replace.
    No key reference is written: a local preset's key is always `preset_secret_name`."""
    existing = _read_presets(local_file) if local_file.is_file() else {}
    existing[preset.name] = preset
    _write_local(local_file, existing)


def _write_local(local_file: Path, existing: dict[str, ModelPreset]) -> None:
    doc = {
        "models": {
            name: p.model_dump(exclude={"name", "api_key_secret"}, exclude_none=True)
            for name, p in sorted(existing.items())
        }
    }
    tmp = local_file.with_suffix(local_file.suffix + ".tmp")
    tmp.write_text(tomli_w.dumps(doc), encoding="utf-8")
    tmp.replace(local_file)
