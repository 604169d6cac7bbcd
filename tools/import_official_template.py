"""Import the official operator template into DATA_DIR/templates/<name>/, verified by SHA-256,
and put a team's project or a frozen candidate on it (for a CANN host).

    uv run python tools/import_official_template.py --zip PATH            # import (all or nothing)
    uv run python tools/import_official_template.py --zip PATH --write-manifest
                                         # regenerate resources/templates/<name>/manifest.json
    uv run python tools/import_official_template.py --into PROJECT        # refresh its fixed files
    uv run python tools/import_official_template.py --candidate RUN/CAND --into DEST
                                         # a frozen candidate's bytes laid over the template
    uv run python tools/import_official_template.py                       # where to get it

`--into` uses the template imported before (or the one `--zip`/`--folder` imports first). A
project's fixed files (outside op_host/**, op_kernel/** and including their CMakeLists.txt) become
the template's; its editable files are never written. `--candidate` reads the frozen bytes from
the lab's store (JUSTKERNEL_DATA_DIR), lays them over the template in the new folder DEST and
checks that they hash to the candidate's source SHA-256.

Exit codes: 0 done, 1 the template does not match the manifest, is another operator's, or cannot
be read (each file named; nothing imported or changed), 2 usage (this tool never downloads
anything). The logic lives in `justkernel.official_template`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from pathlib import Path

from justkernel.official_template import (
    DEFAULT_TEMPLATE,
    Layout,
    Manifest,
    TemplateImportError,
    import_template,
    lay_out,
    load_manifest,
    manifest_from,
    manifest_path,
    refresh_project,
    templates_dir,
)
from justkernel.operators import load_operator
from justkernel.settings.config import ConfigError, Settings, load_settings
from justkernel.toolchains.tree import tree_hash

WHERE = """\
No template given. This tool never downloads anything: get the official {name} operator template
(the msopgen project zip the contest organisers publish with the task, e.g. in the
hicann/cann-ops-competitions materials) on a machine with network access, copy the zip here,
then run:

    uv run python tools/import_official_template.py --zip PATH/TO/template.zip

Every fixed file is checked against {manifest}.
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
    p.add_argument("--into", type=Path, help="a project to refresh, or (--candidate) a new folder")
    p.add_argument("--candidate", metavar="RUN/CAND", help="a frozen candidate of the lab")
    return p


def layout_of(name: str) -> Layout:
    """The manifest's layout, from the operator's `[ascendc]` section (the one source)."""
    target = load_operator(name).ascendc
    if target is None:
        raise TemplateImportError(f"{name}: operator.toml has no [ascendc] section")
    return Layout(
        editable=target.editable,
        forbidden=target.forbidden,
        required=(target.kernel_source, target.host_source, target.tiling_header),
        host_source=target.host_source,
        kernel_source=target.kernel_source,
        op_type=target.op_type,
        kernel_entry=target.kernel_entry,
    )


def _write_manifest(source: Path, name: str, path: Path) -> int:
    old = load_manifest(path) if path.is_file() else None
    extra = dict(old.extra) if old else {}
    if source.is_file():
        extra["source"] = source.name
        extra["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    else:
        extra["source"] = str(source)
        extra.pop("source_sha256", None)
    manifest = manifest_from(source, name, old.header if old else "", extra, layout_of(name))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest.to_json(), encoding="utf-8")
    print(f"wrote {path}: {len(manifest.files)} fixed files from {source}")
    return 0


def _frozen_files(settings: Settings, ref: str) -> tuple[dict[str, bytes], str]:
    """(files, source SHA-256) of candidate RUN/CAND, read as the Judger reads them."""
    from justkernel.lab import open_lab

    run_id, _, candidate_id = ref.partition("/")
    if not run_id or not candidate_id:
        raise TemplateImportError(f"--candidate {ref!r}: expected RUN_ID/CANDIDATE_ID")

    async def read() -> tuple[dict[str, bytes], str]:
        lab = await open_lab(settings)
        try:
            candidate = await lab.candidates.get(run_id, candidate_id)
            return lab.candidates.files(candidate), candidate.source_sha256
        except LookupError as exc:
            raise TemplateImportError(f"run {run_id}: {exc}") from None
        finally:
            await lab.close()

    return asyncio.run(read())


def _place(args: argparse.Namespace, template: Path, manifest: Manifest) -> int:
    if args.candidate:
        files, source_sha256 = _frozen_files(_settings(args), args.candidate)
        dest = lay_out(template, files, args.into, manifest)
        digest = tree_hash(dest, sorted(files))
        if digest != source_sha256:  # cannot happen unless the store was altered
            raise TemplateImportError(f"{dest}: the files hash to {digest}, not {source_sha256}")
        print(f"laid out {args.candidate} at {dest}: {len(files)} editable files, source {digest}")
        return 0
    done = refresh_project(template, args.into, manifest)
    print(
        f"refreshed {args.into}: {len(done.written)} fixed files written, {len(done.removed)} "
        f"removed, {len(done.kept)} editable files untouched"
    )
    for rel in done.written:
        print(f"  wrote {rel}")
    for rel in done.removed:
        print(f"  removed {rel}")
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    settings = load_settings()
    if args.data_dir:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    return settings


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source, imported = args.zip or args.folder, False
    path = args.manifest or manifest_path(args.name)
    if args.candidate and args.into is None:
        print("error: --candidate needs --into DEST", file=sys.stderr)
        return 2
    if source is None and args.into is None:
        print(WHERE.format(name=args.name, manifest=path), file=sys.stderr)
        return 2
    try:
        if args.write_manifest:
            if source is None:
                print("error: --write-manifest needs --zip or --folder", file=sys.stderr)
                return 2
            return _write_manifest(source, args.name, path)
        manifest = load_manifest(path)
        dest = templates_dir(args.data_dir or _settings(args).resolved_data_dir) / args.name
        if source is not None:
            result = import_template(source, dest, manifest)
            imported = True
            verb = "replaced" if result.replaced else "imported"
            print(f"{verb} {result.dest}: {result.files} files verified against {path}")
        if args.into is not None:
            if not dest.is_dir():
                raise TemplateImportError(f"no imported template at {dest}: import one (--zip)")
            return _place(args, dest, manifest)
    except (TemplateImportError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        if args.write_manifest:
            print("no manifest written", file=sys.stderr)
        elif imported:
            print("the template was imported; the project was not changed", file=sys.stderr)
        else:
            print("nothing was imported or changed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
