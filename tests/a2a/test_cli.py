"""`justkernel a2a join` prints the team, its card URL and a token once; only the token's
SHA-256 reaches the database, and `a2a token` rotates it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from justkernel.cli.main import app
from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from justkernel.store.teams import TeamRegistry
from justkernel.store.tokens import TeamIdentity, TokenStore, token_digest


async def _new_run(settings: Settings) -> str:
    lab = await open_lab(settings)
    try:
        return (await lab.runs.create("cli")).id
    finally:
        await lab.close()


async def _resolve(settings: Settings, *tokens: str) -> list[TeamIdentity | None]:
    lab = await open_lab(settings)
    try:
        return [await TokenStore(lab.db).resolve(t) for t in tokens]
    finally:
        await lab.close()


async def _team(settings: Settings, run_id: str, team_id: str):  # type: ignore[no-untyped-def]
    lab = await open_lab(settings)
    try:
        return await TeamRegistry(lab.db).get(run_id, team_id)
    finally:
        await lab.close()


def _printed_token(output: str) -> str:
    match = re.search(r"^token:\s+(\S+)$", output, flags=re.MULTILINE)
    assert match is not None, output
    return match.group(1)


def test_join_prints_the_token_once_and_stores_only_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUSTKERNEL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("JUSTKERNEL_CONFIG_DIR", str(tmp_path / "config"))
    settings = Settings()
    run_id = asyncio.run(_new_run(settings))
    runner = CliRunner()

    joined = runner.invoke(
        app, ["a2a", "join", run_id, "--name", "Outsider", "--base-url", "http://lab:4173"]
    )
    assert joined.exit_code == 0, joined.output
    token = _printed_token(joined.stdout)
    assert "team:       team-001 (Outsider-001)" in joined.stdout
    assert "http://lab:4173/a2a/teams/team-001/.well-known/agent-card.json" in joined.stdout
    assert joined.stdout.count(token) == 1
    team = asyncio.run(_team(settings, run_id, "team-001"))
    assert team.model_preset == "external" and team.config["external"] is True

    database = b"".join(p.read_bytes() for p in (tmp_path / "data").glob("justkernel.db*"))
    assert token.encode() not in database and token_digest(token).encode() in database
    assert asyncio.run(_resolve(settings, token)) == [TeamIdentity(run_id, "team-001")]

    rotated = runner.invoke(app, ["a2a", "token", run_id, "team-001"])
    assert rotated.exit_code == 0, rotated.output
    new_token = _printed_token(rotated.stdout)
    assert asyncio.run(_resolve(settings, token, new_token)) == [
        None,
        TeamIdentity(run_id, "team-001"),
    ]

    unknown = runner.invoke(app, ["a2a", "join", "run-nope", "--name", "X"])
    assert unknown.exit_code == 2 and "run-nope" in unknown.output
    bad_name = runner.invoke(app, ["a2a", "join", run_id, "--name", "../etc"])
    assert bad_name.exit_code == 2 and "team name" in bad_name.output
