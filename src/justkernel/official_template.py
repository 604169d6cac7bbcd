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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from justkernel.paths import resources_dir

MANIFEST_FORMAT = "justkernel.template_manifest/1"
DEFAULT_TEMPLATE = "confusion_mul_grad"
MAX_TOTAL_BYTES = 256 << 20
MAX_ENTRIES = 10_000


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
class Manifest:
    name: str
    files: dict[str, FileEntry]
    header: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # other top-level keys, kept on rewrite

    def to_json(self) -> str:
        data = {
            "format": MANIFEST_FORMAT,
            "name": self.name,
            "header": self.header,
            **self.extra,
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
    extra = {k: v for k, v in data.items() if k not in ("format", "name", "header", "files")}
    return Manifest(str(data.get("name", "")), files, str(data.get("header", "")), extra)


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


def describe(folder: Path) -> dict[str, FileEntry]:
    """SHA-256 and size of every file below `folder`."""
    out = {}
    for dirpath, _dirnames, filenames in os.walk(folder):
        for name in filenames:
            path = Path(dirpath, name)
            digest, size = _sha256(path)
            out[path.relative_to(folder).as_posix()] = FileEntry(digest, size)
    return dict(sorted(out.items()))


def verify(folder: Path, manifest: Manifest) -> list[str]:
    """Every difference between `folder` and the manifest, one line per file."""
    found = describe(folder)
    problems = [f"missing {rel}" for rel in sorted(set(manifest.files) - set(found))]
    problems += [f"extra {rel}" for rel in sorted(set(found) - set(manifest.files))]
    for rel in sorted(set(found) & set(manifest.files)):
        want, got = manifest.files[rel], found[rel]
        if (want.sha256, want.size) != (got.sha256, got.size):
            problems.append(
                f"altered {rel} (sha256 {got.sha256[:12]}, {got.size} bytes; "
                f"expected {want.sha256[:12]}, {want.size} bytes)"
            )
    return problems


@dataclass(frozen=True)
class ImportResult:
    dest: Path
    files: int
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
        return ImportResult(dest, len(manifest.files), replaced)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)


def manifest_from(source: Path, name: str, header: str, extra: dict[str, Any]) -> Manifest:
    """A manifest describing `source` (zip or folder) exactly, for --write-manifest."""
    with tempfile.TemporaryDirectory(prefix="jk-template-") as scratch:
        unpack(source, Path(scratch))
        return Manifest(name, describe(Path(scratch)), header, extra)
