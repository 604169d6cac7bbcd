"""`justkernel resume-provider RUN CONNECTION`: resume a connection paused for auth or balance.

The connection is the model preset the `provider.paused` event names. Its connection test runs
first (`--no-test` skips it), so a key that is still wrong is refused here, with the provider's
words, instead of pausing the teams again. Then `app.provider_resume.resume_connection`: a
request the run's driving scheduler answers on its next pass, or, when nothing drives the run,
the paused teams set idle so that the next `justkernel run --resume RUN` dispatches them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from justkernel.cli.common import console, fail, lab_context, run_async, settings_or_exit
from justkernel.settings.config import Settings


async def _refusal(settings: Settings, connection: str) -> str | None:
    """Why the connection still fails its test, or None (it works, or it is not a preset)."""
    from justkernel.agents.provider_check import test_connection
    from justkernel.settings.models import load_model_presets
    from justkernel.settings.secrets import SecretsStore

    preset = load_model_presets(settings.models_local_file).get(connection)
    if preset is None or preset.provider == "offline":
        return None
    secrets = SecretsStore(settings.config_dir, settings.provider_keys)
    report = await test_connection(preset, secrets, request_timeout=20)
    return None if report.ok else report.message


def resume_provider_command(
    run_id: Annotated[str, typer.Argument(help="The run's id.")],
    provider: Annotated[
        str,
        typer.Argument(
            metavar="CONNECTION", help="The model preset its provider.paused event names."
        ),
    ],
    test: Annotated[
        bool, typer.Option(help="Test the connection first; refuse when it still fails.")
    ] = True,
) -> None:
    """Resume CONNECTION in run RUN after you fixed its key or balance."""
    from justkernel.app.provider_resume import (
        NothingToResume,
        ResumeOutcome,
        check_resumable,
        resume_connection,
    )

    settings = settings_or_exit()

    async def resume() -> ResumeOutcome:
        async with lab_context(settings) as lab:
            await check_resumable(lab, run_id, provider)  # before any request goes out
            if test and (refused := await _refusal(settings, provider)) is not None:
                fail(f"not resumed: the connection test failed: {refused}")
            return await resume_connection(lab, run_id, provider, by="cli")

    try:
        outcome = run_async(resume)
    except (LookupError, NothingToResume) as exc:
        fail(str(exc))
    if outcome.request_seq is not None:
        said = (
            f"resume of {provider} requested (event {outcome.request_seq}): the scheduler "
            f"driving run {run_id} resumes it on its next dispatch pass"
        )
    else:
        teams = ", ".join(outcome.teams) or "no team"
        said = (
            f"{provider} resumed in run {run_id} ({teams} idle again); nothing drives the run: "
            f"continue it with `justkernel run --resume {run_id}`"
        )
    console.print(said, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("resume-provider")(resume_provider_command)
