"""Chat models for the OpenAI-compatible presets (openai, deepseek, qwen, openai_compatible).

Everything that decides what goes on the wire is set here, explicitly, so nothing comes from the
environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`) or from the model's name: chat completions
always (ChatOpenAI switches names like `*-codex` to the Responses API), streamed or not by
provider (`streams`), usage reported in streams always (ChatOpenAI leaves it off for a custom
base URL), reasoning effort and output limit only when the preset sets them. The `offline`
provider is built by the offline model module, not here.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from justkernel.agents.errors import ProviderConfigError
from justkernel.agents.provider_compat import CompatChatOpenAI
from justkernel.agents.provider_deepseek import DeepSeekChatOpenAI
from justkernel.settings.models import (
    DEFAULT_BASE_URLS,
    ModelPreset,
    environment_key,
    preset_secret_name,
)
from justkernel.settings.provider_keys import ENV_NAME as PROVIDER_KEYS_ENV
from justkernel.settings.secrets import SecretsStore

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT_S = 120.0
# local servers (vLLM, llama.cpp, Ollama) accept any key; a placeholder keeps the SDK from
# falling back to OPENAI_API_KEY and sending the user's OpenAI key to someone else's server
_NO_KEY_PLACEHOLDER = "EMPTY"

# Providers whose agent calls stream: only those that require it. Qwen's thinking models answer
# only streamed requests ("most of these models only support streaming output", Alibaba Cloud
# Model Studio, Deep thinking). The others are not streamed: a stream costs the lab CPU per
# chunk (the SDK builds a model per chunk, LangChain re-parses the tool-call arguments so far),
# measured 695 ms against 8 ms of client CPU for one call with an 8,000-character tool argument
# in 2,000 chunks; and OpenAI refuses streams of GPT-5-class models to an unverified
# organisation (400 "Your organization must be verified to stream this model"). The
# connection test sends the same shape (`provider_check`).
STREAMED_PROVIDERS = frozenset({"qwen"})


def streams(preset: ModelPreset) -> bool:
    """Whether the preset's calls go out as server-sent event streams."""
    return preset.provider in STREAMED_PROVIDERS


def _base_url(preset: ModelPreset) -> str:
    url = preset.base_url or DEFAULT_BASE_URLS.get(preset.provider)
    if url is None:
        raise ProviderConfigError(
            f"model preset {preset.name!r}: provider {preset.provider!r} needs a base_url"
        )
    return url


def _api_key(preset: ModelPreset, secrets: SecretsStore) -> str:
    """The stored key, else the one `JUSTKERNEL_PROVIDER_KEYS` gives for the preset's address,
    else a placeholder for a keyless OpenAI-compatible server."""
    stored = secrets.get(preset.api_key_secret) if preset.api_key_secret else None
    secret = stored or environment_key(preset, secrets.environment_keys)
    if secret is not None:
        return secret.reveal()
    own = preset.api_key_secret in (None, preset_secret_name(preset.name))
    if own and preset.provider == "openai_compatible":
        return _NO_KEY_PLACEHOLDER  # a local preset saved without a key: a keyless server
    if preset.api_key_secret is None:
        raise ProviderConfigError(
            f"model preset {preset.name!r}: no api_key_secret is set for provider "
            f"{preset.provider!r}, and {PROVIDER_KEYS_ENV} gives none for its address"
        )
    raise ProviderConfigError(
        f"model preset {preset.name!r}: the API key secret {preset.api_key_secret!r} is "
        f"not stored; store it with `justkernel secrets set {preset.api_key_secret}` or "
        f"give the {preset.provider} key in {PROVIDER_KEYS_ENV}"
    )


def build_chat_model(
    preset: ModelPreset,
    secrets: SecretsStore,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> BaseChatModel:
    """A ChatOpenAI for the preset; raises ProviderConfigError when it cannot be built."""
    if preset.provider == "offline":
        raise ProviderConfigError(
            f"model preset {preset.name!r} is offline: build it with the offline model, "
            "not an OpenAI-compatible client"
        )
    options: dict[str, Any] = {
        "model": preset.model,
        "base_url": _base_url(preset),
        "api_key": _api_key(preset, secrets),
        "use_responses_api": False,
        "stream_usage": True,
        "max_retries": max_retries,
        "timeout": timeout,
    }
    if streams(preset):  # set only then: `streaming=False` would also turn `astream` into one call
        options["streaming"] = True
    if preset.reasoning_effort is not None:
        options["reasoning_effort"] = preset.reasoning_effort
    if preset.max_output_tokens is not None:
        options["max_tokens"] = preset.max_output_tokens
    if preset.provider == "openai":
        options["max_tokens_param"] = "max_completion_tokens"
    if preset.provider in ("deepseek", "qwen"):
        options["provider_name"] = preset.provider
    model_class = DeepSeekChatOpenAI if preset.provider == "deepseek" else CompatChatOpenAI
    return model_class(**options)
