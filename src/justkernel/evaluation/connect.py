"""The Judger's evaluation client, chosen by the lab settings (`JUSTKERNEL_JUDGE`).

- `local` (the embedded default): our `justkernel judge-server` on the judge folder. A judge
  already serving that folder (its `server.json` answers `/api/health`) or `JUSTKERNEL_JUDGE_URL`
  is used as it is; otherwise the lab starts one as a child process on a free loopback port and
  stops it when the lab closes. It is a separate process with its own folder, so nothing a team
  runs can read its hidden points.
- `official`: the contest site; `judge.toml` gives the `[official]` client settings and the
  secrets store the login token (`judge_official_token`).
- `off`: no Judger.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

import justkernel
from justkernel.evaluation.local_client import local_judge_client
from justkernel.evaluation.local_judge_files import read_server_info
from justkernel.evaluation.official_client import HttpJudgeClient, JudgeClientConfig
from justkernel.evaluation.protocol import EvaluationClient
from justkernel.settings.config import ConfigError, Settings
from justkernel.settings.secrets import SecretsStore

OFFICIAL_TOKEN_SECRET = "judge_official_token"
START_SECONDS = 120.0  # the first start draws the hidden points and builds their input packs
STOP_SECONDS = 10.0
PR_SET_PDEATHSIG = 1
# What the judge child inherits from the lab's environment (by name; nothing else).
JUDGE_ENV = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}
    | {"VIRTUAL_ENV", "PYTHONPATH", "XDG_CONFIG_HOME"}
)


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the lab dies, even by SIGKILL (Linux), so a
    crashed lab leaves no judge behind; a restarted lab starts its own."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class JudgeStartError(RuntimeError):
    """The local judge could not be started; the message quotes the end of its log."""


async def judge_healthy(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=2.0) as http:
            response = await http.get(f"{url.rstrip('/')}/api/health")
        return response.status_code == 200 and bool(response.json().get("ok"))
    except (httpx.HTTPError, ValueError):
        return False


class LocalJudgeProcess:
    """A `justkernel judge-server` child on the lab's judge folder."""

    def __init__(self, settings: Settings) -> None:
        self.judge_dir = settings.resolved_judge_dir
        self.log_path = settings.logs_dir / "judge-server.log"
        self._settings = settings
        self._proc: asyncio.subprocess.Process | None = None

    def _command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "justkernel.cli.main",
            "judge-server",
            "--port",
            "0",
            "--data-dir",
            str(self.judge_dir),
        ]

    def _env(self) -> dict[str, str]:
        """A minimal environment, never the lab's (its API token, provider keys): what runs
        Python and finds the tools, plus the lab folders the child checks it stays apart from.
        """
        env = {k: v for k, v in os.environ.items() if k in JUDGE_ENV}
        env["JUSTKERNEL_DATA_DIR"] = str(self._settings.resolved_data_dir)
        env["JUSTKERNEL_CONFIG_DIR"] = str(self._settings.config_dir.expanduser().resolve())
        # the child runs in "/": it finds this very package however the lab was started
        package_root = str(Path(justkernel.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (package_root, env.get("PYTHONPATH"))))
        return env

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-12:])

    async def start(self) -> str:
        """Start the judge and wait until it answers; its URL."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._proc = await asyncio.create_subprocess_exec(
                *self._command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=self._env(),
                cwd="/",  # not the lab's folder: its .env holds the lab's secrets
                start_new_session=True,  # a Ctrl-C in the lab's terminal reaches the lab only
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._proc.returncode is not None:
                raise JudgeStartError(
                    f"the local judge exited with code {self._proc.returncode}; "
                    f"{self.log_path}:\n{self._log_tail()}"
                )
            info = read_server_info(self.judge_dir)
            if info and info.get("pid") == self._proc.pid and await judge_healthy(info["url"]):
                return str(info["url"])
            await asyncio.sleep(0.2)
        await self.stop()
        raise JudgeStartError(
            f"the local judge did not answer within {START_SECONDS:.0f} s; "
            f"{self.log_path}:\n{self._log_tail()}"
        )

    async def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), STOP_SECONDS)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def official_client(settings: Settings, secrets: SecretsStore) -> HttpJudgeClient:
    path = settings.judge_file
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"JUSTKERNEL_JUDGE=official needs {path} with an [official] table (base_url, ...)"
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    table = data.get("official")
    if not isinstance(table, dict) or "base_url" not in table:
        raise ConfigError(f"{path}: needs an [official] table with base_url")
    token = secrets.get(OFFICIAL_TOKEN_SECRET)
    if token is None:
        raise ConfigError(
            f"no official judge token: run `justkernel secrets set {OFFICIAL_TOKEN_SECRET}`"
        )
    try:
        config = JudgeClientConfig.from_mapping({"backend": "official", **table}, token.reveal())
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path} [official]: {exc}") from None
    return HttpJudgeClient(config)


@contextlib.asynccontextmanager
async def connect_judge(
    settings: Settings, secrets: SecretsStore
) -> AsyncIterator[EvaluationClient | None]:
    """The Judger's client for these settings (None when judging is off); a local judge this
    opened is stopped on exit."""
    if settings.judge == "off":
        yield None
        return
    if settings.judge == "official":
        client: EvaluationClient = official_client(settings, secrets)
        try:
            yield client
        finally:
            await client.aclose()
        return
    process: LocalJudgeProcess | None = None
    url = settings.judge_url
    if url is None:
        info = read_server_info(settings.resolved_judge_dir)
        if info and await judge_healthy(str(info["url"])):
            url = str(info["url"])  # a judge someone else runs on this folder
        else:
            process = LocalJudgeProcess(settings)
            url = await process.start()
    try:
        client = local_judge_client(settings.resolved_judge_dir, url=url)
        try:
            yield client
        finally:
            await client.aclose()
    finally:
        if process is not None:
            await process.stop()
