"""An msopgen-style operator project: is it one, what may a team change, what is its hash.

    CMakeLists.txt  CMakePresets.json  build.sh  cmake/ ...   read-only (from the template)
    op_host/<op>.cpp  op_host/<op>_tiling.h ...              editable
    op_kernel/<op>.cpp ...                                    editable
    examples/CMakeLists.txt, examples/*.cpp                   read-only: the aclnn example
    build_out/  build/  .git/                                 ignored (never part of a candidate)

With the imported official template (`justkernel.official_template`), every read-only file
must equal the template's and no read-only file may be added. The tree hash covers the
editable files only (as on the CPU target), which names the candidate once the rest is proven
identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from justkernel.operators.definition import PathPolicy
from justkernel.toolchains.tree import tree_hash

REQUIRED = ("op_host/", "op_kernel/", "CMakePresets.json", "build.sh")
EXAMPLE_SOURCE = "examples/CMakeLists.txt"
IGNORED_DIRS = (".git", "build_out", "build")
DEFAULT_POLICY = PathPolicy(
    editable=("op_host/**", "op_kernel/**"),
    forbidden=("op_host/CMakeLists.txt", "op_kernel/CMakeLists.txt"),
)
DEFAULT_VENDOR = "customize"
MAX_FILE_BYTES = 1 << 20
MAX_FILES = 4000
_VENDOR = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class CannProject:
    root: Path
    missing: tuple[str, ...]  # required entries that are absent
    problems: tuple[str, ...]  # policy findings (changed read-only file, symlink, bad presets)
    editable: dict[str, str] = field(default_factory=dict)  # relative path -> SHA-256
    tree_hash: str = ""
    vendor_name: str = DEFAULT_VENDOR
    compute_units: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.missing and not self.problems


def compute_unit_for(soc_version: str) -> str:
    """CMake's ASCEND_COMPUTE_UNIT for a --soc-version: Ascend910B4 -> ascend910b,
    Ascend310P3 -> ascend310p, Ascend910_9391 -> ascend910_93."""
    soc = soc_version.strip().lower()
    for pattern in (r"(ascend910_93)\d*", r"(ascend\d{3}[a-z]?)\d*"):
        m = re.fullmatch(pattern, soc)
        if m:
            return m.group(1)
    return soc


def _cache_value(cache: dict[str, Any], name: str) -> str | None:
    var = cache.get(name)
    if isinstance(var, dict):
        var = var.get("value")
    return None if var is None else str(var)


def read_presets(path: Path) -> tuple[str, tuple[str, ...]]:
    """(vendor_name, compute units) from CMakePresets.json; ValueError names the problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"CMakePresets.json: unreadable ({exc})") from None
    presets = data.get("configurePresets") if isinstance(data, dict) else None
    if not isinstance(presets, list) or not presets:
        raise ValueError("CMakePresets.json: no configurePresets")
    vendor, units = None, ()
    for preset in presets:
        cache = preset.get("cacheVariables") if isinstance(preset, dict) else None
        if not isinstance(cache, dict):
            continue
        vendor = vendor or _cache_value(cache, "vendor_name")
        unit = _cache_value(cache, "ASCEND_COMPUTE_UNIT")
        if unit and not units:
            units = tuple(u.strip().lower() for u in unit.split(";") if u.strip())
    vendor = vendor or DEFAULT_VENDOR
    if not _VENDOR.match(vendor) or vendor in (".", ".."):
        raise ValueError(f"CMakePresets.json: vendor_name {vendor!r} is not a folder name")
    return vendor, units


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def walk(root: Path) -> tuple[dict[str, os.stat_result], list[str]]:
    """Regular files (relative POSIX path -> lstat) below root, and every entry that is a
    symlink or special file. Ignored top-level folders are skipped."""
    files: dict[str, os.stat_result] = {}
    odd: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in dirnames + filenames:
            rel = (rel_dir / name).as_posix()
            st = Path(dirpath, name).lstat()
            if stat.S_ISREG(st.st_mode):
                files[rel] = st
            elif not stat.S_ISDIR(st.st_mode):  # symlink (lstat), fifo, socket, device
                odd.append(rel)
        dirnames[:] = [d for d in dirnames if not Path(dirpath, d).is_symlink()]
    return dict(sorted(files.items())), sorted(odd)


def file_digests(root: Path) -> dict[str, str]:
    """SHA-256 of every regular file below root (ignored folders left out)."""
    files, _ = walk(root)
    return {rel: _sha256(root / rel) for rel in files}


def _template_problems(
    root: Path, files: dict[str, os.stat_result], template: Path, policy: PathPolicy
) -> list[str]:
    reference, _ = walk(template)
    problems = []
    for rel in sorted(set(files) | set(reference)):
        if policy.access(rel) == "editable":
            continue
        if rel not in reference:
            problems.append(f"extra file {rel} (not in the template)")
        elif rel not in files:
            problems.append(f"template file {rel} is missing")
        elif _sha256(root / rel) != _sha256(template / rel):
            problems.append(f"read-only file {rel} differs from the template")
    return problems


def _present(root: Path, entry: str) -> bool:
    """A required entry: a folder when it ends with '/', else a regular file."""
    path = root / entry
    if path.is_symlink():
        return False
    return path.is_dir() if entry.endswith("/") else path.is_file()


def inspect_project(
    root: Path,
    *,
    template: Path | None = None,
    soc_version: str | None = None,
    policy: PathPolicy = DEFAULT_POLICY,
    need_example: bool = True,
) -> CannProject:
    """Check the layout and the path policy of a project folder; never raises for a bad
    project (the findings are in `missing` and `problems`)."""
    root = Path(root)
    if not root.is_dir():
        return CannProject(root, (f"{root} (not a folder)",), ())
    required = [*REQUIRED, *([EXAMPLE_SOURCE] if need_example else [])]
    missing = tuple(r for r in required if not _present(root, r))
    files, odd = walk(root)
    problems = [f"{rel} is a symlink or special file" for rel in odd]
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files, more than {MAX_FILES}: not an operator project")
        return CannProject(root, missing, tuple(problems))
    editable = [rel for rel in files if policy.access(rel) == "editable"]
    problems += [
        f"{rel} is larger than {MAX_FILE_BYTES} bytes"
        for rel in editable
        if files[rel].st_size > MAX_FILE_BYTES
    ]
    if template is not None:
        problems += _template_problems(root, files, Path(template), policy)
    vendor, units = DEFAULT_VENDOR, ()
    if (root / "CMakePresets.json").is_file():
        try:
            vendor, units = read_presets(root / "CMakePresets.json")
        except ValueError as exc:
            problems.append(str(exc))
    if soc_version and units and compute_unit_for(soc_version) not in units:
        problems.append(
            f"CMakePresets.json: ASCEND_COMPUTE_UNIT {';'.join(units)} does not cover "
            f"{soc_version} ({compute_unit_for(soc_version)})"
        )
    return CannProject(
        root=root,
        missing=missing,
        problems=tuple(problems),
        editable={rel: _sha256(root / rel) for rel in editable},
        tree_hash=tree_hash(root, editable),
        vendor_name=vendor,
        compute_units=units,
    )


def copy_project(src: Path, dest: Path) -> None:
    """A private copy to build in (regular files only, ignored folders left out)."""
    files, _ = walk(src)
    for rel, st in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
        os.chmod(target, 0o755 if st.st_mode & 0o111 else 0o644)
