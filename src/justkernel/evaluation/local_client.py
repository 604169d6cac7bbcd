"""The client for our own `justkernel judge-server`: the official client, found by folder.

The judge speaks the same API as the contest site (docs/judge-api.md), so this is an
`HttpJudgeClient` labelled `local`, whose URL and login token come from the judge folder
(`server.json` and `token`, both 0600). Only the lab process reads them; team tools cannot,
because the judge folder is outside every workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from justkernel.evaluation.local_judge_files import TOKEN_FILE, read_server_info
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.evaluation.protocol import JudgeUnavailable


def local_judge_client(
    judge_dir: Path, *, url: str | None = None, **options: Any
) -> HttpJudgeClient:
    """A client for the judge running on `judge_dir` (or at `url`); `options` go to
    JudgeClientConfig (retry, upload, timeout_seconds, ...)."""
    judge_dir = Path(judge_dir).expanduser()
    if url is None:
        info = read_server_info(judge_dir)
        if info is None:
            raise JudgeUnavailable(
                f"no judge-server is running on {judge_dir}; start `justkernel judge-server`"
            )
        url = str(info["url"])
    try:
        token = (judge_dir / TOKEN_FILE).read_text().strip()
    except OSError:
        raise JudgeUnavailable(f"{judge_dir} holds no judge token") from None
    return HttpJudgeClient(JudgeClientConfig(base_url=url, token=token, backend="local", **options))
