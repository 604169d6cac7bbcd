"""Issue 15 point 1: an API key echoed in a provider's 401 never comes to rest.

Some providers echo the key they were sent in their 401 message; the stand-in does, on purpose.
LangGraph stores a failed node's exception (`repr`) as the checkpoint's `__error__` write, so an
SDK exception carrying the provider's body put the key in `checkpoints.db`. After a run whose
preset holds a wrong key, no file under the data or config folder, no log record and no export
holds it.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

import pytest

from justkernel.app import open_runtime
from justkernel.events.run_export import export_run
from justkernel.settings.config import Settings
from tests.support.leaks import files_containing, zip_members_containing
from tests.support.openai_server import Reply
from tests.support.scripted_run import scripted_run

RIGHT_KEY = f"sk-right-{secrets.token_hex(12)}"


async def test_a_key_echoed_in_a_401_reaches_no_file_log_or_export(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = f"sk-wrong-{secrets.token_hex(12)}"
    settings = Settings(data_dir=tmp_path / "data", config_dir=tmp_path / "config")
    caplog.set_level(logging.DEBUG)
    bundle = tmp_path / "run.zip"
    async with open_runtime(settings, slots=1) as runtime:
        never = [Reply(text="never served")]
        title = "a key echoed in a 401"
        async with scripted_run(runtime, title, never, key=RIGHT_KEY, lab_key=wrong) as arranged:
            run, team = arranged.run, arranged.team
            await arranged.scheduler.run(seconds=60)
            echoed = [r for r in arranged.server.requests if r.status == 401]
        assert echoed, "the stand-in answered no 401: the test proves nothing"
        assert (await runtime.lab.teams.get(run.id, team.id)).status == "paused"
        await export_run(runtime.lab, run.id, bundle)

    needle = wrong.encode()
    assert files_containing(settings.data_dir, needle) == []
    assert files_containing(settings.config_dir, needle) == []
    assert zip_members_containing(bundle, needle) == []
    leaked = [r for r in caplog.records if wrong in r.getMessage() or wrong in (r.exc_text or "")]
    assert leaked == []
