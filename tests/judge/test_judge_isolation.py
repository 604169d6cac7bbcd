"""A team cannot reach the judge's hidden points: the judge folder (seed, cases, token) and its
evaluation folder lie outside the lab's data folder and every workspace, `TeamWorkspace.resolve`
(and the agents' file tools on top of it) cannot get there by any escape, and the sandboxes of
a real team evaluation never bind either folder, nor can a sandboxed program open their files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from justkernel.agents.backend import WorkspaceBackend
from justkernel.core.receipts import JobKind, Status
from justkernel.judge.eval import JudgeEvaluation
from justkernel.judge.hidden_cases import CASES_FILE, SEED_FILE, load_or_create_hidden_cases
from justkernel.judge.paths import JudgeFolder, JudgeFolderError
from justkernel.operators import CaseSpec, load_operator
from justkernel.settings.config import Settings
from justkernel.teams.workspace import TeamWorkspace, WorkspaceError
from justkernel.toolchains import CpuToolchain
from justkernel.toolchains.sandbox import SandboxLimits, SandboxResult, run_sandboxed
from justkernel.toolchains.sandbox import checked as cpu_sandbox
from tests.support.judge import (
    new_judge_dir,
    template_folder,
    work_root,
)
from tests.support.server import spawn
from tests.workers.test_evaluator_shared import (
    SMALL_CASE,
    evaluator,
    fresh_dir,
    own_settings,
    require_tools,
)

pytestmark = pytest.mark.timeout(300)


def overlaps(a: Path, b: Path) -> bool:
    a, b = a.resolve(), b.resolve()
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def judge_folder() -> JudgeFolder:
    return JudgeFolder.open(template_folder(), work_root=work_root())


def _hidden(folder: JudgeFolder) -> tuple[CaseSpec, ...]:
    return load_or_create_hidden_cases(folder.root, load_operator())


def test_the_default_judge_folder_is_the_private_config_folder(tmp_path: Path) -> None:
    require_tools()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    env.pop("JUSTKERNEL_CONFIG_DIR", None)
    lab_data = tmp_path / "lab-data"
    env["JUSTKERNEL_DATA_DIR"] = str(lab_data)
    argv = [sys.executable, "-m", "justkernel.cli.main", "judge-server", "--port", "0"]
    inside = lab_data / "workspaces" / "judge"
    refused = subprocess.run(
        [*argv, "--data-dir", str(inside)], env=env, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 2
    assert "overlaps the lab data folder" in refused.stderr
    assert not (inside / CASES_FILE).exists()
    # no --data-dir: $XDG_CONFIG_HOME/justkernel/judge, 0700, nowhere near the lab
    process = spawn([*argv, "--work-dir", str(work_root())], env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
    finally:
        process.terminate()
        process.wait(timeout=30)
    default = tmp_path / "xdg" / "justkernel" / "judge"
    assert f"Judge folder: {default} (15 hidden points)" in "".join(lines), lines
    assert (default / CASES_FILE).stat().st_mode & 0o777 == 0o600
    assert default.stat().st_mode & 0o777 == 0o700
    assert not overlaps(default, lab_data)


def test_a_judge_folder_overlapping_the_lab_is_refused(settings: Settings) -> None:
    lab = settings.resolved_data_dir
    for root, work in (
        (lab / "judge", None),
        (settings.workspaces_dir / "team-001" / "scratch", None),
        (lab.parent, None),  # a judge folder holding the lab's data folder
        (settings.config_dir / "judge", lab / "work"),
    ):
        with pytest.raises(JudgeFolderError, match="overlaps the lab data folder"):
            JudgeFolder.open(root, work_root=work or work_root(), lab_data_dir=lab)
    folder = JudgeFolder.open(
        settings.config_dir / "judge", work_root=work_root(), lab_data_dir=lab
    )
    assert not overlaps(folder.root, lab) and not overlaps(folder.work_dir, lab)
    assert folder.root.stat().st_mode & 0o777 == 0o700
    assert folder.work_dir.parent.stat().st_mode & 0o777 == 0o711  # not listable
    assert len(folder.work_dir.name) == 32  # the unguessable name, kept in the judge folder


async def test_team_tools_cannot_reach_the_hidden_cases(settings: Settings) -> None:
    folder = judge_folder()
    evaluation = JudgeEvaluation.create(folder, load_operator(), _hidden(folder))
    try:
        packs = await evaluation.target("cpu").evaluator.packs(
            JobKind.FULL
        )  # hidden inputs on disk
    finally:
        await evaluation.close()
    secrets = [
        folder.root / CASES_FILE,
        folder.root / SEED_FILE,
        folder.token_path,
        packs["local"].case_dir("h01") / "input0.bin",
        packs["local"].golden_dir("h01") / "output1.bin",
    ]
    ws = TeamWorkspace.create(settings.workspaces_dir / "team-001", load_operator())
    os.symlink(folder.root, ws.root / "scratch" / "judge")
    os.symlink(packs["local"].root, ws.root / "scratch" / "packs")
    backend = WorkspaceBackend(ws)
    content = {s: s.read_bytes()[:64].decode("latin-1") for s in secrets}
    for secret in secrets:
        assert secret.is_file()
        assert not overlaps(secret, ws.root) and not overlaps(secret, settings.resolved_data_dir)
        relative = "../" * (len(ws.root.parts) - 1) + str(secret).lstrip("/")  # via the root
        attempts = [
            str(secret),
            relative,
            "/" + relative,
            relative.replace("/", "\\"),
            f"op_kernel/../{relative}",
            f"scratch/judge/{secret.name}",
            f"scratch/packs/cases/h01/{secret.name}",
            f"~/{secret.name}",
            f"{secret}\0",
        ]
        for attempt in attempts:
            for write in (False, True):
                try:
                    host = ws.resolve(attempt, write=write)
                except WorkspaceError:
                    continue
                # a path that resolves is workspace-rooted, never the judge's file
                assert host.is_relative_to(ws.root) and not host.exists(), attempt
            result = backend.read(attempt)
            assert result.error is not None, attempt  # refused, or not found in the workspace
            assert content[secret] not in repr(result)


async def test_team_evaluation_sandboxes_never_bind_the_judge_folders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_tools()
    folder = judge_folder()
    binds: list[Path] = []
    real = cpu_sandbox.run_sandboxed

    async def recording(
        argv: list[str],
        *,
        ro_binds: dict[str, Path],
        rw_dir: Path,
        limits: SandboxLimits,
        cwd: str | None = None,
    ) -> SandboxResult:
        binds.extend(Path(p) for p in ro_binds.values())
        binds.append(Path(rw_dir))
        return await real(argv, ro_binds=ro_binds, rw_dir=rw_dir, limits=limits, cwd=cwd)

    monkeypatch.setattr(cpu_sandbox, "run_sandboxed", recording)
    lab = own_settings("lab")
    ws = TeamWorkspace.create(lab.workspaces_dir / "team-001", load_operator())
    candidate = ws.export_candidate(lab.resolved_data_dir / "exports" / "team-001")
    toolchain = CpuToolchain(cache_dir=lab.resolved_data_dir / "toolchains" / "cpu")  # as the lab's
    ev = evaluator(slots=1, settings=lab, tc=toolchain)
    try:
        receipt = await ev.evaluate(candidate, team="team-001", kind="probe", case_ids=[SMALL_CASE])
    finally:
        await ev.pool.close()
    assert receipt.status is Status.PROBE_PASSED, receipt.detail
    assert len(binds) >= 4  # compile (source, output) and the case run (harness, inputs, output)
    for path in binds:
        assert path.resolve().is_relative_to(lab.resolved_data_dir), path
        assert not overlaps(path, folder.root) and not overlaps(path, folder.work_dir), path

    # and a sandboxed program cannot open the judge's files by their host paths
    evaluation = JudgeEvaluation.create(folder, load_operator(), _hidden(folder))
    try:
        pack = (await evaluation.target("cpu").evaluator.packs(JobKind.PROBE))["local"]
    finally:
        await evaluation.close()
    targets = [folder.root / CASES_FILE, pack.case_dir("h01") / "input0.bin"]
    out = fresh_dir("sandbox-out")
    argv = ["/bin/sh", "-c", 'for f in "$@"; do cat "$f" || echo "missing $f"; done', "sh"]
    result = await run_sandboxed(
        [*argv, *map(str, targets)], rw_dir=out, limits=SandboxLimits(wall_seconds=20)
    )
    assert all(target.is_file() for target in targets)  # there on the host, absent inside
    assert result.stdout.text.splitlines() == [f"missing {t}" for t in targets]
    assert result.stderr.text.count("No such file or directory") == len(targets)


def test_a_new_judge_folder_gets_its_own_secret_seed(tmp_path: Path) -> None:
    mine = new_judge_dir(tmp_path)
    assert (mine / SEED_FILE).read_text() == (template_folder() / SEED_FILE).read_text()
    other = JudgeFolder.open(tmp_path / "other", work_root=work_root())
    _hidden(other)
    assert (other.root / SEED_FILE).read_text() != (mine / SEED_FILE).read_text()
    assert (other.root / SEED_FILE).stat().st_mode & 0o777 == 0o600
    assert _hidden(other) != _hidden(JudgeFolder.open(mine, work_root=work_root()))
