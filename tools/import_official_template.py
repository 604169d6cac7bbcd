"""Import the official operator template into DATA_DIR/templates/<name>/, verified by SHA-256.

    uv run python tools/import_official_template.py --zip PATH            # import (all or nothing)
    uv run python tools/import_official_template.py --zip PATH --write-manifest
                                         # regenerate resources/templates/<name>/manifest.json
    uv run python tools/import_official_template.py                       # where to get it

Exit codes: 0 imported (or manifest written), 1 the template does not match the manifest or
cannot be read (each file named), 2 usage (no --zip: this tool never downloads anything).
The logic lives in `justkernel.official_template`.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from justkernel.official_template import (
    DEFAULT_TEMPLATE,
    TemplateImportError,
    import_template,
    load_manifest,
    manifest_from,
    manifest_path,
    templates_dir,
)
from justkernel.settings.config import ConfigError, load_settings

WHERE = """\
No template given. This tool never downloads anything: get the official {name} operator template
(the msopgen project zip the contest organisers publish with the task, e.g. in the
hicann/cann-ops-competitions materials) on a machine with network access, copy the zip here,
then run:

    uv run python tools/import_official_template.py --zip PATH/TO/template.zip

Every file is checked against {manifest}.
If the organisers published a new version, regenerate that manifest from the zip first
(--write-manifest) and review the change before importing.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = p.add_mutually_exclusive_group()
    source.add_argument("--zip", type=Path, help="the official template zip")
    source.add_argument("--folder", type=Path, help="an unpacked template folder instead")
    p.add_argument("--name", default=DEFAULT_TEMPLATE, help="template name (default: %(default)s)")
    p.add_argument("--data-dir", type=Path, help="lab data folder (default: JUSTKERNEL_DATA_DIR)")
    p.add_argument("--manifest", type=Path, help="manifest to verify against (default: shipped)")
    p.add_argument(
        "--write-manifest",
        action="store_true",
        help="write the manifest of the given zip instead of importing it",
    )
    return p


def _write_manifest(source: Path, name: str, path: Path) -> int:
    old = load_manifest(path) if path.is_file() else None
    extra = dict(old.extra) if old else {}
    if source.is_file():
        extra["source"] = source.name
        extra["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    else:
        extra["source"] = str(source)
        extra.pop("source_sha256", None)
    manifest = manifest_from(source, name, old.header if old else "", extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest.to_json(), encoding="utf-8")
    print(f"wrote {path}: {len(manifest.files)} files from {source}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source = args.zip or args.folder
    path = args.manifest or manifest_path(args.name)
    if source is None:
        print(WHERE.format(name=args.name, manifest=path), file=sys.stderr)
        return 2
    try:
        if args.write_manifest:
            return _write_manifest(source, args.name, path)
        data_dir = args.data_dir or load_settings().resolved_data_dir
        dest = templates_dir(data_dir) / args.name
        result = import_template(source, dest, load_manifest(path))
    except (TemplateImportError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(
            "no manifest written" if args.write_manifest else "nothing was imported",
            file=sys.stderr,
        )
        return 1
    verb = "replaced" if result.replaced else "imported"
    print(f"{verb} {result.dest}: {result.files} files verified against {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
