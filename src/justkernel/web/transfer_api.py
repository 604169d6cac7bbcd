"""Export a run as a session bundle, import a bundle as a replay run, and download a run report
— the same code as `justkernel export` / `import` / `report`, behind the dashboard's buttons."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from justkernel.events.run_archive import BundleError, ExportRefused
from justkernel.events.run_export import export_run
from justkernel.events.run_import import import_bundle
from justkernel.lab import Lab
from justkernel.reports.i18n import lang_of
from justkernel.reports.report import build_report
from justkernel.web.config_api import refuse_in_demo
from justkernel.web.host_paths import hide_host_paths

CHUNK = 1 << 16


def _tmp_dir(lab: Lab) -> Path:
    folder = lab.settings.resolved_data_dir / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


async def export_bundle(request: Request) -> Response:
    lab: Lab = request.app.state.lab
    run_id = request.path_params["run_id"]
    await lab.runs.get(run_id)
    target = _tmp_dir(lab) / f"export-{secrets.token_hex(6)}.jkbundle"
    result = await export_run(lab, run_id, target)
    return FileResponse(
        result.path,
        media_type="application/zip",
        filename=f"{run_id}.jkbundle",
        headers={"X-Bundle-SHA256": result.sha256, "X-Event-Count": str(result.event_count)},
        background=BackgroundTask(_unlink, result.path),
    )


class UploadRefused(BundleError):
    """An import error, told about "the upload" rather than the temp file it was read from."""


async def import_upload(request: Request) -> Response:
    """The request body is the bundle file itself (no multipart: nothing to parse twice).
    The demo imports nothing: it plays its recording and changes nothing else."""
    refuse_in_demo(request, "importing is disabled; run `justkernel serve` to import bundles")
    lab: Lab = request.app.state.lab
    limit = lab.settings.export_max_bytes
    target = _tmp_dir(lab) / f"import-{secrets.token_hex(6)}.jkbundle"
    size = 0
    try:
        with target.open("wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BundleError(f"the upload is over the import limit of {limit:,} bytes")
                out.write(chunk)
        name = request.query_params.get("name") or None
        try:
            result = await import_bundle(lab, target, name=name)
        except BundleError as exc:
            raise UploadRefused(str(exc).replace(str(target), "the upload")) from None
    finally:
        _unlink(target)
    return JSONResponse(
        {
            "run": result.run.to_dict(),
            "sha256": result.sha256,
            "event_count": result.event_count,
            "source_run_id": result.source_run_id,
        }
    )


async def report(request: Request) -> Response:
    lab: Lab = request.app.state.lab
    run_id, fmt = request.path_params["run_id"], request.path_params["fmt"]
    if fmt not in ("md", "html"):
        return JSONResponse({"error": "not_found", "detail": "report.md or report.html"}, 404)
    text = await build_report(lab, run_id, fmt, lang=lang_of(request.query_params.get("lang")))
    media = "text/markdown; charset=utf-8" if fmt == "md" else "text/html; charset=utf-8"
    disposition = f'attachment; filename="{run_id}-report.{fmt}"'
    return Response(text, media_type=media, headers={"Content-Disposition": disposition})


async def bundle_refused(request: Request, exc: Exception) -> Response:
    status = 409 if isinstance(exc, ExportRefused) else 400
    detail = hide_host_paths(str(exc), request.app.state.lab.settings)
    return JSONResponse({"error": "bundle", "detail": detail}, status_code=status)


routes = [
    Route("/api/runs/{run_id}/export", export_bundle, methods=["GET"]),
    Route("/api/import", import_upload, methods=["POST"]),
    Route("/api/runs/{run_id}/report.{fmt}", report, methods=["GET"]),
]

exception_handlers = {BundleError: bundle_refused}
# the upload's body is the bundle itself (the dashboard sends application/octet-stream)
body_types = {
    "/api/import": frozenset({"application/octet-stream", "application/zip", "application/x-zip"})
}
