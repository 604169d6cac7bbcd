"""A submission to the judge that carries a git repository below the editable folders.

Whoever holds a judge token (the lab's Judger, or anyone who got one) can POST a bundle; a
`.git` directory at any depth is git configuration waiting for a git command, so the judge
refuses it with a clear 400 before anything is unpacked or run, as JSON files and as a ZIP.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from justkernel.evaluation.protocol import CandidateBundle
from justkernel.evaluation.submission_files import encode_bundle
from tests.support.judge import RunningJudge, bundle, new_judge_dir, running_judge
from tests.workers.test_evaluator_shared import require_tools

pytestmark = pytest.mark.timeout(300)
HOOK = b'[core]\n\tfsmonitor = "touch /tmp/justkernel-pwned; false"\n'
GIT_PATHS = [
    "op_kernel/vendor/.git/config",
    "op_kernel/.GIT/config",
    "op_kernel/vendor/.git./HEAD",
    "op_host/x/.Git/objects/info/alternates",
    "op_kernel/.gitmodules",
]


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJudge]:
    require_tools(valgrind=True)
    with running_judge(new_judge_dir(tmp_path_factory.mktemp("gitbundle"))) as running:
        yield running


@pytest.mark.parametrize("path", GIT_PATHS)
def test_a_bundle_with_git_files_at_depth_is_refused(judge: RunningJudge, path: str) -> None:
    files = {**bundle().files, path: HOOK}
    for upload in ("files", "zip"):
        candidate = CandidateBundle.create("confusion_mul_grad", files, toolchain="cpu")
        body = encode_bundle(candidate, upload=upload)
        r = httpx.post(
            f"{judge.url}/api/submissions",
            json=body,
            headers={"Authorization": f"Bearer {judge.token}"},
            timeout=30,
        )
        assert r.status_code == 400, (upload, r.text)
        assert r.json()["error"] == "bad_bundle"
        detail = r.json()["detail"]
        assert detail.startswith(path) and "git" in detail[len(path) :], detail
    listed = httpx.get(
        f"{judge.url}/api/submissions", headers={"Authorization": f"Bearer {judge.token}"}
    ).json()
    assert path not in str(listed)
