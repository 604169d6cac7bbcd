"""Fixtures of the report tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings


@pytest.fixture
async def sqlite_lab(settings: Settings) -> AsyncIterator[Lab]:
    """One SQLite lab: reports and folds read the event log the same way on every backend."""
    lab = await open_lab(settings)
    try:
        yield lab
    finally:
        await lab.close()
