"""The two files of the judge folder that the lab's local client reads to reach the judge.

The judge service (`justkernel.judge`) writes them; the lab never imports the service, so the
names and the reader of `server.json` live here, on the client's side of the wire, and
`judge/paths.py` takes them from this module. Nothing else of the judge folder (the hidden
seed and cases, the database, the feedback key) is named on this side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOKEN_FILE = "token"
SERVER_FILE = "server.json"


def read_server_info(root: Path) -> dict[str, Any] | None:
    """URL and pid of the judge last started on `root`, or None when none is running."""
    try:
        info = json.loads((Path(root) / SERVER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) and "url" in info else None
