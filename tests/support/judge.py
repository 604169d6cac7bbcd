"""Helpers for the judge tests (no tests here): real judge servers, project folders, bundles,
and the `judge_url` fixture (a conftest re-exports it where a folder's tests need it).

Every judge of a test process is a copy of one template judge folder (same secret seed, same
hidden points, same evaluation folder), so the receipt cache is shared: the naive baseline's
15 callgrind runs happen once per process, later submissions of it are cache hits. The
evaluation folder lives below a world-traversable temp folder, as the sandbox uid needs.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
import uvicorn

from justkernel.evaluation.protocol import CandidateBundle
from justkernel.judge.eval import toolchain_cache_dir
from justkernel.judge.hidden_cases import load_or_create_hidden_cases
from justkernel.judge.paths import JudgeFolder
from justkernel.judge.server import JudgeConfig, create_judge_app
from justkernel.operators import load_operator
from justkernel.web.server import bind_socket
from tests.support.labs import open_folder
from tests.support.server import read_until, spawn, wait_healthy
from tests.workers.test_evaluator_shared import shared_root

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KERNELS = FIXTURES / "kernels"
URL_RE = re.compile(r"JustKernel judge serving on (http://\S+)")
TOKEN_RE = re.compile(r"Login token: (\S+)")


def work_root() -> Path:
    """The evaluation root every test judge shares (traversable by the sandbox uid)."""
    path = shared_root() / "judge-work"
    path.mkdir(exist_ok=True)
    path.chmod(0o711)
    return path


@functools.cache
def template_folder() -> Path:
    """A judge folder with its seed, hidden points, token and work name (no database)."""
    folder = JudgeFolder.open(shared_root() / "judge-template", work_root=work_root())
    load_or_create_hidden_cases(folder.root, load_operator())
    folder.token()
    return folder.root


async def seed_ascendc_artefacts() -> None:
    """The test judges' ascendc-cpu cache seeded with the lab side's trusted artefacts: the
    harness main and the precompiled headers (our code, built once per test session for every
    ascendc-cpu test). Every test judge shares one evaluation folder, so none builds them again
    (~12 CPU-s). Team objects (`objects/`) are not copied: the judge compiles its own."""
    from tests.toolchains.ascendc_cpu.ladder_support import cache_dir, toolchain

    tc = toolchain()
    await tc.warm()
    seed_judge_artefacts(cache_dir() / tc.version, template_folder(), tc.id)


def seed_judge_artefacts(built: Path, judge_dir: Path, toolchain_id: str) -> None:
    """Copy the lab's trusted artefacts of one toolchain version (`built`, a
    `<toolchains>/<id>/<version>/` folder: the harness main and the precompiled headers) into
    the evaluation cache of the judge at `judge_dir`, so that judge does not build them again.
    What is there already stays."""
    folder = JudgeFolder.open(judge_dir, work_root=work_root())
    dest = toolchain_cache_dir(folder.work_dir, toolchain_id) / built.name
    dest.mkdir(parents=True, exist_ok=True)
    if not (dest / "main.o").is_file():
        shutil.copy2(built / "main.o", dest / "main.o")
    if not (dest / "pch").is_dir():
        shutil.copytree(built / "pch", dest / "pch")


def new_judge_dir(parent: Path) -> Path:
    """A fresh judge folder (own database) with the shared seed, points and work folder."""
    return judge_dir_at(parent / f"judge-{uuid.uuid4().hex[:8]}")


def judge_dir_at(dest: Path) -> Path:
    """`new_judge_dir` at a given path: the judge folder a lab starts its local judge on
    (`<config>/judge`), laid out before the lab starts it. The judge's evaluation folder is
    named in the folder, so every judge laid out so shares one receipt cache per work root
    (a judge the lab starts uses the default root, a test judge `work_root()`)."""
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # private, as the lab makes it
    shutil.copytree(template_folder(), dest)
    dest.chmod(0o700)
    return dest


def judge_token(judge_dir: Path) -> str:
    return (judge_dir / "token").read_text().strip()


def project(variant: str | None = None, *, unique: bool = False) -> Path:
    """The template project with a fixture kernel laid over it ("specialised_kernel" or one
    of tests/fixtures/kernels/*); `unique` adds a comment so nothing is served from a cache."""
    definition = load_operator()
    dest = Path(tempfile.mkdtemp(prefix="project-", dir=shared_root())) / "project"
    shutil.copytree(definition.project_dir, dest, ignore=shutil.ignore_patterns("build"))
    if variant is not None:
        source = FIXTURES / variant if variant == "specialised_kernel" else KERNELS / variant
        for part in ("op_host", "op_kernel"):
            if (source / part).is_dir():
                shutil.copytree(source / part, dest / part, dirs_exist_ok=True)
    if unique:
        kernel = dest / definition.build.kernel_source
        kernel.write_text(kernel.read_text() + f"\n/* {uuid.uuid4().hex} */\n")
    for dirpath, _dirs, files in os.walk(dest.parent):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return dest


def bundle(variant: str | None = None, *, unique: bool = False, **meta: str) -> CandidateBundle:
    """A C port bundle (toolchain "cpu") of `project(variant)`."""
    folder = project(variant, unique=unique)
    return CandidateBundle.from_project(folder, load_operator(), toolchain="cpu", **meta)


def ascendc_bundle(folder: Path | None = None, **meta: str) -> CandidateBundle:
    """An Ascend C bundle (toolchain "ascendc-cpu") of `folder`, by default the template's."""
    definition = load_operator()
    folder = folder or definition.for_toolchain("ascendc-cpu").project_dir
    return CandidateBundle.from_project(folder, definition, toolchain="ascendc-cpu", **meta)


# -- a judge-server subprocess (the real CLI) -----------------------------------------------------
@dataclass
class RunningJudge:
    process: subprocess.Popen[str]
    url: str
    token_path: Path
    judge_dir: Path
    output: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def token(self) -> str:
        return self.token_path.read_text().strip()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start_judge(judge_dir: Path, *args: str, port: int = 0) -> RunningJudge:
    argv = [sys.executable, "-m", "justkernel.cli.main", "judge-server", "--port", str(port)]
    argv += ["--data-dir", str(judge_dir), "--work-dir", str(work_root()), *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = spawn(argv, env)
    output: list[str] = []
    try:
        url = read_until(process, output, URL_RE, 90, "judge-server")
        token_path = Path(read_until(process, output, TOKEN_RE, 90, "judge-server"))
        wait_healthy(f"{url}/api/health")
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    threading.Thread(target=_drain, args=(process, output), daemon=True).start()
    return RunningJudge(process, url, token_path, judge_dir, output)


def _drain(process: subprocess.Popen[str], output: list[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        output.append(line)


@contextmanager
def running_judge(judge_dir: Path, *args: str, port: int = 0) -> Iterator[RunningJudge]:
    judge = start_judge(judge_dir, *args, port=port)
    try:
        yield judge
    finally:
        judge.stop()


# -- an in-process judge on a real socket, for a clock the test controls ---------------------------
class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def parse_utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@contextmanager
def judge_in_thread(judge_dir: Path, **options: object) -> Iterator[str]:
    """`create_judge_app` under uvicorn in a thread (its own event loop); yields the URL."""
    folder = JudgeFolder.open(judge_dir, work_root=work_root())
    app = create_judge_app(JudgeConfig(folder, **options))  # type: ignore[arg-type]
    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, access_log=False, log_config=None))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    try:
        if not server.started:
            raise RuntimeError("the in-process judge did not start")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture
def judge_url() -> Iterator[tuple[str, str]]:
    """A real local judge (in a thread, over HTTP): its URL and login token."""
    judge_dir = new_judge_dir(open_folder("jk-judger-"))
    with judge_in_thread(judge_dir) as url:
        yield url, judge_token(judge_dir)
