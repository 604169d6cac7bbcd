"""Settings, model presets and the encrypted secrets store."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from justkernel.settings import ConfigError, ModelPreset, load_model_presets, save_local_preset
from justkernel.settings.config import Settings, load_settings
from justkernel.settings.redaction import RedactingFilter
from justkernel.settings.secrets import SecretsError, SecretsStore

SECRET = "sk-test-0123456789abcdefSECRET"


def test_defaults_need_nothing_and_live_under_dot_justkernel() -> None:
    settings = load_settings()
    assert settings.host == "127.0.0.1"
    assert settings.port == 4173
    assert settings.resolved_data_dir == (Path.cwd() / ".justkernel").resolve()
    assert settings.resolved_database_url.startswith("sqlite+aiosqlite:///")
    assert settings.resolved_database_url.endswith("/.justkernel/justkernel.db")


def test_environment_and_dotenv_override_and_errors_name_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JUSTKERNEL_PORT", "5000")
    (tmp_path / ".env").write_text("JUSTKERNEL_DATA_DIR=/tmp/jk-data\n")
    settings = load_settings()
    assert settings.port == 5000
    assert settings.data_dir == Path("/tmp/jk-data")
    monkeypatch.setenv("JUSTKERNEL_DATABASE_URL", "mysql://x")
    with pytest.raises(ConfigError, match="JUSTKERNEL_DATABASE_URL"):
        load_settings()


def test_model_presets_include_the_public_ones_without_credentials() -> None:
    presets = load_model_presets()
    assert presets["offline"].provider == "offline"
    qwen = presets["qwen"]
    assert qwen.model == "qwen3.8-flash"
    assert qwen.base_url == "https://maas.qianwenaiapi.com/compatible-mode/v1"
    assert qwen.reasoning_effort == "low"
    assert qwen.max_output_tokens is None
    assert {"gpt", "deepseek"} <= presets.keys()
    public_text = (Path(__file__).resolve().parents[2] / "models.toml").read_text()
    assert "api_key =" not in public_text


def test_local_presets_are_written_with_tomli_w_and_overlay(tmp_path: Path) -> None:
    local = tmp_path / "models.local.toml"
    preset = ModelPreset(
        name="my-qwen", provider="qwen", model="qwen3.8-flash", api_key_secret="my_key"
    )
    save_local_preset(local, preset)
    save_local_preset(local, ModelPreset(name="other", provider="openai", model="gpt-x"))
    presets = load_model_presets(local)
    # the key a local preset uses is always its own, whatever it named
    assert presets["my-qwen"] == preset.model_copy(
        update={"api_key_secret": "preset:my-qwen:api_key"}
    )
    assert "my_key" not in local.read_text()
    assert "other" in presets and "offline" in presets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[models.x\nprovider='openai'", "not valid TOML"),
        ("[models.x]\nprovider = 'nobody'\nmodel = 'm'\n", "models.x.provider"),
        ("[models.x]\nprovider = 'openai'\nmodel = 'm'\nbase_url = 'ftp://h'\n", "base_url"),
        ("[models.x]\nprovider = 'openai'\nmodel = 'm'\ncolour = 'red'\n", "colour"),
    ],
)
def test_invalid_model_file_names_file_key_and_problem(
    tmp_path: Path, text: str, expected: str
) -> None:
    local = tmp_path / "models.local.toml"
    local.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_model_presets(local)
    assert str(local) in str(err.value)
    assert expected in str(err.value)


def test_secrets_are_encrypted_at_rest_with_a_private_key_file(settings: Settings) -> None:
    store = SecretsStore(settings.config_dir)
    store.set("qwen_api_key", SECRET)
    assert stat.S_IMODE(store.key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.data_file.stat().st_mode) == 0o600
    for path in settings.config_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()
    secret = store.get("qwen_api_key")
    assert secret is not None and secret.reveal() == SECRET
    assert SECRET not in repr(secret) and SECRET not in f"{secret}" and SECRET not in str(secret)
    assert store.names() == ["qwen_api_key"]
    assert store.get("missing") is None
    assert store.delete("qwen_api_key") and store.names() == []


def test_secrets_refuse_bad_names_and_foreign_keys(settings: Settings) -> None:
    store = SecretsStore(settings.config_dir)
    with pytest.raises(SecretsError, match="invalid secret name"):
        store.set("../etc", "value-123")
    store.set("k", "value-123456")
    store.key_file.write_bytes(b"x" * 44)
    with pytest.raises(SecretsError):
        store.get("k")


def test_log_records_never_carry_a_known_secret(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    store = SecretsStore(settings.config_dir)
    store.set("deepseek_api_key", SECRET)
    logger = logging.getLogger("justkernel.test")
    caplog.handler.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("calling provider with key %s", store.get("deepseek_api_key").reveal())
        logger.info(f"header Authorization: Bearer {SECRET}")
    assert SECRET not in caplog.text
    assert caplog.text.count("***") == 2
