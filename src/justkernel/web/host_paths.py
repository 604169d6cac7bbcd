"""Host paths stay on the host: API answers name a file, never where it lives.

An error text from the layers below (an import's temp file, a broken hosts.toml, a key file
that cannot be read) may carry absolute paths: the user's name, their folders, the lab's
layout. Every error the web layer passes on goes through `hide_host_paths`, and
configuration answers show `shown_path`.
"""

from __future__ import annotations

import re
from pathlib import Path

from justkernel.settings.config import Settings

# what is left of a path under a hidden folder: up to the next space, quote or bracket
_REST = r"[^\s'\"(),;\]]*"
# any other absolute path of two parts or more (not the path part of a URL)
_ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[\w.+-]+/)+([\w.+-]+)")


def _folders(settings: Settings) -> list[Path]:
    return [
        settings.resolved_data_dir,
        settings.config_dir.expanduser().resolve(),
        settings.resolved_judge_dir,
        Path.cwd(),
        Path.home(),
    ]


def shown_path(path: Path) -> str:
    """What the dashboard shows for a configured file: its name."""
    return path.name


def hide_host_paths(text: str, settings: Settings) -> str:
    """`text` with every path under the lab's folders, the working folder or the home folder
    cut to its file name (`/home/ana/lab/.justkernel/tmp/import-1.jkbundle` → `import-1.jkbundle`),
    and any other absolute path to its last part."""
    for folder in sorted(_folders(settings), key=lambda f: len(str(f)), reverse=True):
        if str(folder) in ("", "/"):
            continue
        pattern = re.escape(str(folder)) + r"(?:/" + _REST + r")?(?![\w.+-])"
        text = re.sub(pattern, lambda m: Path(m.group(0)).name or "<folder>", text)
    return _ABSOLUTE.sub(r"\1", text)
