"""Issue 17 point 1: provider keys from `JUSTKERNEL_PROVIDER_KEYS` (the environment or `.env`).

Parsed at load (a malformed variable names its problem, never a value), kept as secrets (no
repr shows one, the scrubber knows each), used by a preset with no stored key, and only where
the provider's key may go: the real OpenAI-compatible stand-in gets the key at the address the
variable names, a listener at any other address never sees it.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import openai
import pytest

from justkernel.agents.errors import ProviderConfigError
from justkernel.agents.providers import build_chat_model
from justkernel.settings import redaction
from justkernel.settings.config import ConfigError, load_settings
from justkernel.settings.models import (
    ModelPreset,
    environment_key,
    load_model_presets,
    preset_secret_name,
)
from justkernel.settings.provider_keys import ENV_NAME, ProviderKeys
from justkernel.settings.secrets import SecretsStore
from tests.security.web_lab import listener
from tests.support.openai_server import OpenAIServer, Reply

ENV_KEY = f"sk-env-{secrets.token_hex(16)}"
OPENAI_KEY = f"sk-openai-{secrets.token_hex(16)}"
STORED = f"sk-stored-{secrets.token_hex(16)}"


def _local(name: str, provider: str, base_url: str) -> ModelPreset:
    """A local preset as the loader gives it: its key is the one stored with it."""
    return ModelPreset(
        name=name,
        provider=provider,  # type: ignore[arg-type]
        model="scripted-model",
        base_url=base_url,
        api_key_secret=preset_secret_name(name),
    )


def test_dotenv_keys_load_as_secrets_and_are_scrubbed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    value = json.dumps({"openai": OPENAI_KEY, "deepseek": ENV_KEY})
    (tmp_path / ".env").write_text(f"{ENV_NAME}={value}\n")  # the cwd is tmp_path
    settings = load_settings()
    assert settings.provider_keys.providers == ["deepseek", "openai"]
    shown = repr(settings) + str(settings.provider_keys) + repr(settings.model_dump())
    assert OPENAI_KEY not in shown and ENV_KEY not in shown
    assert redaction.scrub(f"key {OPENAI_KEY} and {ENV_KEY}") == "key *** and ***"
    shipped = load_model_presets()
    found = environment_key(shipped["gpt"], settings.provider_keys)
    assert found is not None and found.reveal() == OPENAI_KEY
    assert environment_key(shipped["qwen"], settings.provider_keys) is None  # none given


def test_a_key_exported_in_the_environment_is_scrubbed_without_loading_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    late = f"sk-late-{secrets.token_hex(16)}"
    monkeypatch.setenv(ENV_NAME, json.dumps({"qwen": late}))
    assert late not in redaction.scrub(f"a log line with {late}")


def test_the_cached_secret_list_follows_every_change_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The list is cached between scrubs; a variable set, replaced by a value of the same
    length, or removed after a scrub ran is seen by the next one (bytes and masks too)."""
    first, second = (f"sk-cache-{secrets.token_hex(16)}" for _ in range(2))
    monkeypatch.setenv("JK_TEST_CACHE_TOKEN", first)
    assert redaction.scrub(f"x {first}") == "x ***"
    monkeypatch.setenv("JK_TEST_CACHE_TOKEN", second)  # same length, same name
    assert redaction.scrub(f"x {first} {second}") == f"x {first} ***"
    assert redaction.scrub_bytes(f"x {second}".encode()) == b"x ***"
    masked = redaction.mask_bytes(f"[{second}]".encode())
    assert masked == b"[" + b"*" * len(second) + b"]"
    monkeypatch.delenv("JK_TEST_CACHE_TOKEN")
    assert redaction.scrub(f"x {second}") == f"x {second}"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{not json " + ENV_KEY, "not valid JSON"),
        (json.dumps([ENV_KEY]), "must be a JSON object"),
        (json.dumps({ENV_KEY: "openai"}), "unknown provider name"),
        (json.dumps({"openai": ""}), "non-empty string"),
        (json.dumps({"openai": ENV_KEY + " x"}), "one line"),
        (json.dumps({"openai_compatible": ENV_KEY}), "no address of its own"),
        (json.dumps({"openai": {"key": ENV_KEY, "base_url": "ftp://x"}}), "base_url"),
        (json.dumps({"openai": {"key": ENV_KEY, "url": "http://x"}}), "unknown field"),
    ],
    # ids without the key: it is random per process, and xdist workers must collect the same ids
    ids=lambda v: v if ENV_KEY not in v else "value",
)
def test_a_malformed_variable_names_the_problem_never_the_value(
    monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    monkeypatch.setenv(ENV_NAME, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert ENV_NAME in message and problem in message
    assert ENV_KEY not in message


def test_the_stand_in_gets_the_environment_key_and_a_stored_key_wins(tmp_path: Path) -> None:
    with OpenAIServer([Reply(text="one"), Reply(text="two")], api_key=ENV_KEY) as server:
        keys = ProviderKeys.parse(
            json.dumps({"openai_compatible": {"key": ENV_KEY, "base_url": server.base_url}})
        )
        store = SecretsStore(tmp_path / "config", keys)
        preset = _local("envkeyed", "openai_compatible", server.base_url)
        answer = build_chat_model(preset, store, max_retries=0).invoke("hi")
        assert answer.text == "one"
        store.set(preset_secret_name("envkeyed"), STORED)  # a stored key wins
        with pytest.raises(openai.AuthenticationError):
            build_chat_model(preset, store, max_retries=0).invoke("hi")
    assert [r.auth_ok for r in server.requests] == [True, False]
    assert store.names() == [preset_secret_name("envkeyed")]  # nothing written for the env


def test_an_environment_key_never_goes_to_an_address_a_preset_chose(tmp_path: Path) -> None:
    keys = ProviderKeys.parse(json.dumps({"openai": OPENAI_KEY}))
    store = SecretsStore(tmp_path / "config", keys)
    with listener() as attacker:
        for provider in ("openai", "openai_compatible"):
            moved = _local(f"moved-{provider}", provider, attacker.base_url)
            assert environment_key(moved, keys) is None
            try:  # openai: no key for that address; openai_compatible: the keyless placeholder
                build_chat_model(moved, store, max_retries=0, timeout=5).invoke("hi")
            except ProviderConfigError as exc:
                assert ENV_NAME in str(exc) and OPENAI_KEY not in str(exc)
            except openai.AuthenticationError:  # the listener answers 401 to whatever it gets
                pass
        assert not attacker.saw(OPENAI_KEY)
    # at the provider's own address (its default), a local preset may use it
    own = _local("mine", "openai", "https://api.openai.com/v1/")
    found = environment_key(own, keys)
    assert found is not None and found.reveal() == OPENAI_KEY
