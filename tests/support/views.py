"""Waiting on a run's dashboard view (`GET /api/runs/{id}/view`) of a real `justkernel serve`:
the browser tests poll it for the state their next step needs (paused, stopped, done)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

View = dict[str, Any]


def wait_view(
    api: httpx.Client, run_id: str, predicate: Callable[[View], bool], timeout: float = 90
) -> View:
    """Poll the run's view until `predicate` holds; that view. Fails with the last view seen."""
    deadline = time.monotonic() + timeout
    view: View = {}
    while time.monotonic() < deadline:
        view = api.get(f"/api/runs/{run_id}/view").json()
        if predicate(view):
            return view
        time.sleep(0.3)
    raise AssertionError(f"view never matched: {view}")
