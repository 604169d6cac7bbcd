"""Importing the official operator template, verified file by file, all or nothing.

The official template (an msopgen project zip) cannot be fetched by the lab: a person downloads
it and hands it to `tools/import_official_template.py --zip PATH`. Every file is checked
against the SHA-256 manifest shipped in `resources/templates/<name>/manifest.json`; a missing,
extra or altered file is reported by name, and the template lands in
`DATA_DIR/templates/<name>/` (outside the package and the repository) only when every file
matched. Extraction happens in a temp folder beside the destination and is renamed into place,
so the destination is either the old template or the new one, never a mix.

Zip entries are refused when they are absolute, climb out with `..`, are symlinks or special
files, or would make the archive larger than `MAX_TOTAL_BYTES`; a zip whose entries all sit in
one top-level folder (as GitHub and most tools make them) has that folder stripped.

The manifest's `layout` is the Ascend C project's path policy (`[ascendc]` in operator.toml:
editable `op_host/**`, `op_kernel/**` but not their CMakeLists.txt). Only the fixed files (every
file outside the editable paths) are hashed: the organisers may change the sample kernel, not the
build. A template must still carry the sources the layout names (kernel, host, tiling header) and
declare the operator's op type (`OP_ADD(<op_type>)`, the msopgen registration) and kernel entry,
else it is another operator's project and is refused. `refresh_project` copies the fixed files
into a team's project, `lay_out` builds a project from the template and a frozen candidate's
editable files; neither ever writes an editable file a team owns.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from justkernel.paths import resources_dir

MANIFEST_FORMAT = "justkernel.template_manifest/1"
DEFAULT_TEMPLATE = "confusion_mul_grad"
MAX_TOTAL_BYTES = 256 << 20
MAX_ENTRIES = 10_000
IGNORED_DIRS = (".git", "build", "build_out")  # never part of a project (as toolchains.tree)


class TemplateImportError(RuntimeError):
    """The source does not match the manifest or cannot be read; `problems` names each file."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems or [])
        lines = [message, *(f"  {p}" for p in self.problems)]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class FileEntry:
    sha256: str
    size: int


@dataclass(frozen=True)
class Layout:
    """The project's path policy and what makes it this operator's project. The globs follow
    `operators.PathPolicy` (`dir/**` everything below dir, else fnmatch; forbidden wins); a
    test keeps this copy equal to operator.toml's `[ascendc]` (this layer cannot import it)."""

    editable: tuple[str, ...]
    forbidden: tuple[str, ...]
    required: tuple[str, ...]  # editable sources the template must carry (kernel, host, tiling)
    host_source: str
    kernel_source: str
    op_type: str
    kernel_entry: str

    def is_editable(self, rel: str) -> bool:
        """True when a team may change `rel` (then the manifest does not hash it)."""
        if any(_glob(rel, p) for p in self.forbidden):
            return False
        return any(_glob(rel, p) for p in self.editable)

    def to_dict(self) -> dict[str, Any]:
        return {
            "editable": list(self.editable),
            "forbidden": list(self.forbidden),
            "required": list(self.required),
            "host_source": self.host_source,
            "kernel_source": self.kernel_source,
            "op_type": self.op_type,
            "kernel_entry": self.kernel_entry,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layout:
        return cls(
            editable=tuple(str(p) for p in data["editable"]),
            forbidden=tuple(str(p) for p in data["forbidden"]),
            required=tuple(_safe_name(str(p)) for p in data["required"]),
            host_source=_safe_name(str(data["host_source"])),
            kernel_source=_safe_name(str(data["kernel_source"])),
            op_type=str(data["op_type"]),
            kernel_entry=str(data["kernel_entry"]),
        )


def _glob(path: str, pattern: str) -> bool:
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return fnmatchcase(path, pattern)


@dataclass(frozen=True)
class Manifest:
    """`files`: the fixed files (all files when there is no layout)."""

    name: str
    files: dict[str, FileEntry]
    header: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # other top-level keys, kept on rewrite
    layout: Layout | None = None

    def fixed(self, rel: str) -> bool:
        return self.layout is None or not self.layout.is_editable(rel)

    def to_json(self) -> str:
        data = {
            "format": MANIFEST_FORMAT,
            "name": self.name,
            "header": self.header,
            **self.extra,
            **({"layout": self.layout.to_dict()} if self.layout else {}),
            "files": {
                rel: {"sha256": e.sha256, "size": e.size} for rel, e in sorted(self.files.items())
            },
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def manifest_path(name: str = DEFAULT_TEMPLATE) -> Path:
    """The manifest shipped with the lab for template `name`."""
    return resources_dir() / "templates" / name / "manifest.json"


def templates_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "templates"


def load_manifest(path: Path) -> Manifest:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TemplateImportError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise TemplateImportError(f"{path}: not a {MANIFEST_FORMAT} manifest")
    try:
        files = {
            _safe_name(rel): FileEntry(str(e["sha256"]).lower(), int(e["size"]))
            for rel, e in data["files"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TemplateImportError(f"{path}: malformed 'files' ({exc})") from None
    try:
        layout = Layout.from_dict(data["layout"]) if "layout" in data else None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TemplateImportError(f"{path}: malformed 'layout' ({exc})") from None
    keys = ("format", "name", "header", "files", "layout")
    extra = {k: v for k, v in data.items() if k not in keys}
    manifest = Manifest(
        str(data.get("name", "")), files, str(data.get("header", "")), extra, layout
    )
    hashed_editable = [rel for rel in files if not manifest.fixed(rel)]
    if hashed_editable:
        raise TemplateImportError(
            f"{path}: 'files' lists editable paths (only fixed files are hashed)", hashed_editable
        )
    return manifest


def _safe_name(name: str) -> str:
    """A relative POSIX path inside the template, or ValueError."""
    if "\\" in name or "\0" in name:
        raise ValueError(f"{name!r}: backslash or NUL in a path")
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(p in ("..", ".") for p in path.parts):
        raise ValueError(f"{name!r}: absolute or escaping path")
    if path.parts[0].endswith(":"):
        raise ValueError(f"{name!r}: drive-letter path")
    return path.as_posix()


def _sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _zip_members(archive: zipfile.ZipFile) -> list[tuple[str, zipfile.ZipInfo]]:
    """(template-relative name, entry) of every file; refuses unsafe entries up front."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise TemplateImportError(f"{len(infos)} entries, more than {MAX_ENTRIES}")
    problems, named = [], []
    for info in infos:
        try:
            name = _safe_name(info.filename.rstrip("/"))
        except ValueError as exc:
            problems.append(f"refused {exc}")
            continue
        if not info.is_dir():
            named.append((name, info))
    files, total, seen = [], 0, set()
    for name, info in _strip_top(named):
        mode = info.external_attr >> 16
        if name in seen:
            problems.append(f"refused {name}: appears twice")
        seen.add(name)
        if stat.S_ISLNK(mode):
            problems.append(f"refused {name}: a symlink")
        elif mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            problems.append(f"refused {name}: not a regular file")
        else:
            total += info.file_size
            files.append((name, info))
    if total > MAX_TOTAL_BYTES:
        problems.append(f"refused: {total} bytes unpacked, more than {MAX_TOTAL_BYTES}")
    if problems:
        raise TemplateImportError("unsafe archive", problems)
    return files


def _strip_top(files: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    tops = {name.split("/", 1)[0] for name, _ in files}
    if len(tops) == 1 and all("/" in name for name, _ in files):
        return [(name.split("/", 1)[1], item) for name, item in files]
    return files


def _extract_zip(source: Path, into: Path) -> None:
    try:
        with zipfile.ZipFile(source) as archive:
            for name, info in _zip_members(archive):
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, target.open("xb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 16)
                executable = (info.external_attr >> 16) & 0o111
                os.chmod(target, 0o755 if executable else 0o644)
    except (zipfile.BadZipFile, OSError) as exc:
        raise TemplateImportError(f"{source}: cannot read the zip ({exc})") from None


def _copy_folder(source: Path, into: Path) -> None:
    problems, files = [], []
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(source).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"refused {rel}: a symlink")
            elif stat.S_ISREG(mode):
                files.append((rel, path))
            elif not stat.S_ISDIR(mode):
                problems.append(f"refused {rel}: not a regular file")
        dirnames[:] = [d for d in dirnames if not Path(dirpath, d).is_symlink()]
    if problems:
        raise TemplateImportError("unsafe folder", problems)
    for rel, path in files:
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        os.chmod(target, 0o755 if path.stat().st_mode & 0o111 else 0o644)


def unpack(source: Path, into: Path) -> None:
    """A zip or a folder's regular files into the (empty) folder `into`."""
    source = Path(source)
    if source.is_dir():
        _copy_folder(source, into)
    elif source.is_file():
        _extract_zip(source, into)
    else:
        raise TemplateImportError(f"{source}: no such zip or folder")


def describe(folder: Path, *, project: bool = False) -> dict[str, FileEntry]:
    """SHA-256 and size of every file below `folder` (`project`: its .git and build folders
    left out, as the toolchains do)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        if project and Path(dirpath) == Path(folder):
            dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in filenames:
            path = Path(dirpath, name)
            digest, size = _sha256(path)
            out[path.relative_to(folder).as_posix()] = FileEntry(digest, size)
    return dict(sorted(out.items()))


def verify(folder: Path, manifest: Manifest) -> list[str]:
    """Every difference between `folder` and the manifest, one line per file: the fixed files
    exactly, then (with a layout) the operator's sources and their op type."""
    found = {rel: e for rel, e in describe(folder).items() if manifest.fixed(rel)}
    problems = [f"missing {rel}" for rel in sorted(set(manifest.files) - set(found))]
    problems += [f"extra {rel}" for rel in sorted(set(found) - set(manifest.files))]
    for rel in sorted(set(found) & set(manifest.files)):
        want, got = manifest.files[rel], found[rel]
        if (want.sha256, want.size) != (got.sha256, got.size):
            problems.append(
                f"altered {rel} (sha256 {got.sha256[:12]}, {got.size} bytes; "
                f"expected {want.sha256[:12]}, {want.size} bytes)"
            )
    if manifest.layout is not None:
        problems += layout_problems(folder, manifest.layout)
    return problems


# msopgen registers the op in its host source with OP_ADD(<OpType>) and names the kernel
# `extern "C" __global__ __aicore__ void <kernel_name>(...)` (Ascend C operator project docs).
_OP_ADD = re.compile(r"\bOP_ADD\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")


def _kernel_entry(entry: str) -> re.Pattern[str]:
    return re.compile(rf"__aicore__\s+void\s+{re.escape(entry)}\s*\(")


def layout_problems(folder: Path, layout: Layout) -> list[str]:
    """Whether `folder` is this operator's project: its sources are there, the host source
    registers `op_type` and the kernel source defines the kernel entry."""
    problems = []
    for rel in layout.required:
        path = Path(folder) / rel
        if not path.is_file() or path.is_symlink():
            problems.append(f"missing {rel} (a source of {layout.op_type} the project needs)")
    host, kernel = Path(folder) / layout.host_source, Path(folder) / layout.kernel_source
    if host.is_file() and not host.is_symlink():
        ops = _OP_ADD.findall(host.read_text(encoding="utf-8", errors="replace"))
        if layout.op_type not in ops:
            named = ", ".join(ops) if ops else "no OP_ADD(...)"
            problems.append(
                f"{layout.host_source} registers {named}, not OP_ADD({layout.op_type}): "
                "another operator's template"
            )
    if kernel.is_file() and not kernel.is_symlink():
        text = kernel.read_text(encoding="utf-8", errors="replace")
        if not _kernel_entry(layout.kernel_entry).search(text):
            problems.append(
                f"{layout.kernel_source} defines no __aicore__ kernel {layout.kernel_entry}()"
            )
    return problems


@dataclass(frozen=True)
class ImportResult:
    dest: Path
    files: int  # every file imported (the fixed ones verified by hash)
    replaced: bool  # an earlier template was at dest and has been replaced


def import_template(source: Path, dest: Path, manifest: Manifest) -> ImportResult:
    """Verify `source` (zip or folder) against `manifest` and put it at `dest` atomically.

    On any failure `dest` is left exactly as it was and TemplateImportError lists the files.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.import-", dir=dest.parent))
    try:
        tree = staging / "tree"
        tree.mkdir()
        unpack(source, tree)
        problems = verify(tree, manifest)
        if problems:
            raise TemplateImportError(
                f"{source} does not match the {manifest.name or 'template'} manifest", problems
            )
        count = len(describe(tree))
        replaced = dest.exists()
        if replaced:
            old = staging / "previous"
            os.rename(dest, old)
            try:
                os.rename(tree, dest)
            except OSError:
                os.rename(old, dest)
                raise
        else:
            os.rename(tree, dest)
        return ImportResult(dest, count, replaced)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)


def manifest_from(
    source: Path, name: str, header: str, extra: dict[str, Any], layout: Layout | None = None
) -> Manifest:
    """A manifest of `source` (zip or folder) for --write-manifest: its fixed files, checked
    against the layout (a template of another operator is refused here too)."""
    with tempfile.TemporaryDirectory(prefix="jk-template-") as scratch:
        unpack(source, Path(scratch))
        if layout is not None:
            problems = layout_problems(Path(scratch), layout)
            if problems:
                raise TemplateImportError(f"{source} is not a {name} project", problems)
        files = {
            rel: e
            for rel, e in describe(Path(scratch)).items()
            if layout is None or not layout.is_editable(rel)
        }
        return Manifest(name, files, header, extra, layout)


# -- a team's project on the template ---------------------------------------------------------


@dataclass(frozen=True)
class Refreshed:
    written: tuple[str, ...]  # fixed files added or replaced
    removed: tuple[str, ...]  # fixed-path files the template does not have
    kept: tuple[str, ...]  # the team's editable files, untouched


def _layout_of(manifest: Manifest) -> Layout:
    if manifest.layout is None:
        raise TemplateImportError(f"the {manifest.name} manifest has no layout (editable paths)")
    return manifest.layout


def _verified_template(template: Path, manifest: Manifest) -> None:
    problems = verify(template, manifest)
    if problems:
        raise TemplateImportError(
            f"{template} does not match the {manifest.name} manifest", problems
        )


def _refuse_links(project: Path) -> None:
    odd = []
    for dirpath, dirnames, filenames in os.walk(project, followlinks=False):
        if Path(dirpath) == project:
            dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                odd.append(f"refused {path.relative_to(project).as_posix()}: not a regular file")
    if odd:
        raise TemplateImportError(f"{project}: symlinks or special files", odd)


def refresh_project(template: Path, project: Path, manifest: Manifest) -> Refreshed:
    """Make `project`'s fixed files the (verified) template's: copy each one that differs,
    remove fixed-path files the template lacks; the editable files are never written. Refused
    (nothing changed) when the template does not verify or the project is not this operator's."""
    layout = _layout_of(manifest)
    template, project = Path(template), Path(project)
    _verified_template(template, manifest)
    if not project.is_dir():
        raise TemplateImportError(f"{project}: no such project folder")
    _refuse_links(project)
    problems = layout_problems(project, layout)
    if problems:
        raise TemplateImportError(f"{project} is not a {manifest.name} project", problems)
    current = describe(project, project=True)
    written, removed = [], []
    for rel in sorted(set(current) - set(manifest.files)):
        if manifest.fixed(rel):
            (project / rel).unlink()
            removed.append(rel)
    for rel, entry in sorted(manifest.files.items()):
        if rel in current and current[rel] == entry:
            continue
        target = project / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template / rel, target)
        os.chmod(target, 0o755 if (template / rel).stat().st_mode & 0o111 else 0o644)
        written.append(rel)
    kept = tuple(rel for rel in current if not manifest.fixed(rel))
    return Refreshed(tuple(written), tuple(removed), kept)


def lay_out(template: Path, files: dict[str, bytes], dest: Path, manifest: Manifest) -> Path:
    """A project at `dest` (must not exist): the verified template's fixed files and exactly
    `files` as the editable ones (a frozen candidate's bytes; the template's sample sources are
    left out, so the tree hash is the candidate's)."""
    layout = _layout_of(manifest)
    template, dest = Path(template), Path(dest)
    _verified_template(template, manifest)
    bad = []
    for rel in sorted(files):
        try:
            if _safe_name(rel) != rel or not layout.is_editable(rel):
                bad.append(f"refused {rel}: not an editable path")
        except ValueError as exc:
            bad.append(f"refused {exc}")
    if bad:
        raise TemplateImportError("the candidate's files are not all editable", bad)
    dest.mkdir(parents=True)
    for rel in manifest.files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template / rel, target)
        os.chmod(target, 0o755 if (template / rel).stat().st_mode & 0o111 else 0o644)
    for rel, data in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    problems = layout_problems(dest, layout)
    if problems:
        shutil.rmtree(dest)
        raise TemplateImportError(f"the candidate is not a {manifest.name} project", problems)
    return dest
