"""`justkernel resume-provider RUN PROVIDER`: resume a provider paused for auth or balance.

This process is not the one driving the run, so it logs a request
(`app.provider_resume`); the run's scheduler answers it on its next dispatch pass.
"""

from __future__ import annotations

from typing import Annotated

import typer

from justkernel.cli.common import console, fail, lab_context, run_async, settings_or_exit


def resume_provider_command(
    run_id: Annotated[str, typer.Argument(help="The run's id.")],
    provider: Annotated[
        str, typer.Argument(help="The provider, as its provider.paused event names it.")
    ],
) -> None:
    """Resume PROVIDER in run RUN after you fixed its key or balance."""
    from justkernel.app.provider_resume import NothingToResume, request_provider_resume

    settings = settings_or_exit()

    async def request() -> int:
        async with lab_context(settings) as lab:
            return await request_provider_resume(lab, run_id, provider, by="cli")

    try:
        seq = run_async(request)
    except (LookupError, NothingToResume) as exc:
        fail(str(exc))
    console.print(
        f"resume of provider {provider} requested (event {seq}): the scheduler driving run "
        f"{run_id} resumes it on its next dispatch pass, or when the run is next driven",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("resume-provider")(resume_provider_command)
