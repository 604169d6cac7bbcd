"""The Judger's judge comes from configuration alone (`JUSTKERNEL_JUDGE`): off, a local judge
at a URL, the official client from `judge.toml` plus a stored token (here pointed at our own
judge, which speaks the official API), clear errors for what is missing, and a local judge
that cannot start says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from justkernel.evaluation.connect import JudgeStartError, connect_judge
from justkernel.evaluation.official_client import HttpJudgeClient
from justkernel.settings.config import ConfigError, Settings
from justkernel.settings.secrets import SecretsStore


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", config_dir=tmp_path / "config", **values)  # type: ignore[arg-type]


async def test_judging_off_gives_no_client(tmp_path: Path) -> None:
    settings = _settings(tmp_path, judge="off")
    async with connect_judge(settings, SecretsStore(settings.config_dir)) as client:
        assert client is None


async def test_the_official_client_comes_from_judge_toml_and_the_secrets_store(
    tmp_path: Path, judge_url: tuple[str, str]
) -> None:
    url, token = judge_url
    judge_file = tmp_path / "judge.toml"
    settings = _settings(tmp_path, judge="official", judge_file=judge_file)
    secrets = SecretsStore(settings.config_dir)

    with pytest.raises(ConfigError, match=r"judge\.toml with an \[official\] table"):
        async with connect_judge(settings, secrets):
            pass
    judge_file.write_text('[official]\nupload = "zip"\n')
    with pytest.raises(ConfigError, match="needs an \\[official\\] table with base_url"):
        async with connect_judge(settings, secrets):
            pass
    judge_file.write_text(f'[official]\nbase_url = "{url}"\nsurprise = 1\n')
    secrets.set("judge_official_token", token)
    with pytest.raises(ConfigError, match="unknown judge client settings: surprise"):
        async with connect_judge(settings, secrets):
            pass
    secrets.delete("judge_official_token")
    judge_file.write_text(f'[official]\nbase_url = "{url}"\n[official.retry]\nattempts = 2\n')
    with pytest.raises(ConfigError, match="secrets set judge_official_token"):
        async with connect_judge(settings, secrets):
            pass

    secrets.set("judge_official_token", token)
    async with connect_judge(settings, secrets) as client:
        assert isinstance(client, HttpJudgeClient)
        assert client.backend == "official" and client.config.retry.attempts == 2
        assert token not in repr(client)
        quota = await client.quota()  # a real login and call against the judge's API
        assert quota is not None and quota.limit == 50


async def test_a_local_judge_at_a_url_is_used_as_it_is(
    tmp_path: Path, judge_url: tuple[str, str]
) -> None:
    url, token = judge_url
    judge_dir = tmp_path / "judge"
    judge_dir.mkdir(mode=0o700)
    (judge_dir / "token").write_text(token + "\n")
    settings = _settings(tmp_path, judge_url=url, judge_dir=judge_dir)
    async with connect_judge(settings, SecretsStore(settings.config_dir)) as client:
        assert client is not None and client.backend == "local"
        assert (await client.quota()) is not None
    assert not (settings.logs_dir / "judge-server.log").exists()  # nothing was started


async def test_a_local_judge_that_cannot_start_says_why(tmp_path: Path) -> None:
    # a judge folder inside the data folder is refused by the judge itself
    settings = _settings(tmp_path, judge_dir=tmp_path / "data" / "judge")
    with pytest.raises(JudgeStartError, match="overlaps the lab data folder"):
        async with connect_judge(settings, SecretsStore(settings.config_dir)):
            pass
