"""The secret-leak check reads a bundle's plaintext, not its deflated bytes.

Finding: tests/foundation/test_secret_never_leaks.py asserted `secret not in bundle.read_bytes()`,
but a bundle is a deflated zip, so that assertion held even when the secret was inside. Here a
run really carries the secret in plain text (as a model echoing its key into a note would), is
exported by the real CLI, and the check must find it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from justkernel.lab import open_lab
from justkernel.settings.config import Settings
from tests.support.leaks import files_containing, zip_members_containing
from tests.support.server import export_run

PLANTED = "sk-planted-3Wq8Lz0Vb5Nc7Xm2Rk9T"


async def _run_with_planted_text(data: Path, config: Path) -> str:
    lab = await open_lab(Settings(data_dir=data, config_dir=config))
    try:
        run = await lab.runs.create("planted", meta={"model": "qwen"})
        await lab.events.append(run.id, "note", {"text": f"my key is {PLANTED}"})
        return run.id
    finally:
        await lab.close()


def test_a_secret_inside_an_exported_bundle_is_found(tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    run_id = asyncio.run(_run_with_planted_text(data, config))
    (tmp_path / "out").mkdir()
    bundle = export_run(data, config, run_id, tmp_path / "out" / "run.jkb")
    planted = PLANTED.encode()
    assert planted not in bundle.read_bytes()  # the old check: blind to deflated members
    members = zip_members_containing(bundle, planted)
    assert members, "the planted text is in an event, so in the bundle's event log"
    assert files_containing(bundle.parent, planted) == [bundle]
