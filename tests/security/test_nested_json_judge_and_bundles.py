"""Attack: JSON nested deep enough to blow Python's recursion limit.

`json.loads` recurses once per level, so ten thousand `[` raised `RecursionError`: a 500 from
the local judge's body parser (login and submit read JSON before anything else), and an
unhandled error from the bundle parsers (the manifest and each event line). They now use
`jsonsafe.loads_bounded` and answer with a clear refusal.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import httpx
import pytest

from justkernel.events.run_archive import EVENTS_NAME, MANIFEST_NAME, InvalidBundle
from justkernel.events.run_export import export_run
from justkernel.events.run_import import import_bundle
from justkernel.lab import Lab
from tests.foundation.test_bundle import members_of, seed_run, snapshot
from tests.support.judge import judge_in_thread, new_judge_dir

DEEP = 100_000
DEEP_LOGIN = 2_000  # past the recursion limit, inside the 4 KiB a login body may have


def test_the_judge_answers_deeply_nested_json_with_400(tmp_path: Path) -> None:
    with judge_in_thread(new_judge_dir(tmp_path)) as url:
        deep = "[" * DEEP_LOGIN + "]" * DEEP_LOGIN
        for body in (deep, '{"token": ' + deep + "}"):
            answer = httpx.post(
                f"{url}/api/login",
                content=body,
                headers={"content-type": "application/json"},
                timeout=30,
            )
            assert answer.status_code == 400, answer.text
            assert "deeper than 64 levels" in answer.json()["detail"]


def _rewrite(bundle: Path, out: Path, name: str, data: bytes) -> Path:
    members = members_of(bundle)
    members[name] = data
    if name != MANIFEST_NAME:  # keep the manifest consistent with the new member
        manifest = json.loads(members[MANIFEST_NAME])
        manifest["members"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        members[MANIFEST_NAME] = json.dumps(manifest).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, content in members.items():
            zf.writestr(member, content)
    return out


@pytest.mark.parametrize("where", ["manifest", "event line", "event payload"])
async def test_a_bundle_with_deeply_nested_json_is_refused(
    lab: Lab, tmp_path: Path, where: str
) -> None:
    run = await seed_run(lab)
    exported = await export_run(lab, run.id, tmp_path / "ok.jkbundle")
    deep = "[" * DEEP + "]" * DEEP
    members = members_of(exported.path)
    if where == "manifest":
        name, data = MANIFEST_NAME, ('{"format": "justkernel-bundle", "x": ' + deep + "}").encode()
    else:
        lines = members[EVENTS_NAME].split(b"\n")
        first = json.loads(lines[0])
        if where == "event line":
            lines[0] = lines[0][:-1] + b', "deep": ' + deep.encode() + b"}"
        else:
            head = lines[0][: lines[0].index(b'"payload":') + len(b'"payload":')]
            lines[0] = head + b'{"deep": ' + deep.encode() + b"}}"
        assert first["seq"] == 1
        name, data = EVENTS_NAME, b"\n".join(lines)
    bundle = _rewrite(exported.path, tmp_path / "deep.jkbundle", name, data)
    before = await snapshot(lab)

    with pytest.raises(InvalidBundle) as refused:
        await import_bundle(lab, bundle)

    assert "deeper than 64 levels" in str(refused.value) or "line 1" in str(refused.value)
    assert await snapshot(lab) == before
