"""Configuration endpoints: model connections, worker hosts and the Judger's settings.

Keys and passwords are write-only: they go straight into the encrypted secrets store, and
answers say only whether one is stored (`has_key`), never what it is. Every refusal names the
field (`400 {"errors": {...}}`). The demo server refuses every change (403).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from justkernel.lab import Lab
from justkernel.settings import redaction
from justkernel.settings.config import ConfigError
from justkernel.settings.models import (
    DEFAULT_BASE_URLS,
    ModelPreset,
    delete_local_preset,
    environment_key,
    load_model_presets,
    preset_secret_name,
    save_local_preset,
    shipped_preset_names,
)
from justkernel.settings.provider_keys import ProviderKeys
from justkernel.settings.secrets import SecretsStore
from justkernel.web.forms import FormErrors, Problem, json_body, parse_model
from justkernel.web.host_paths import hide_host_paths, shown_path
from justkernel.web.hosts_config import delete_host, list_hosts, save_host
from justkernel.web.refusals import Refused

PROVIDERS = ["offline", "openai", "deepseek", "qwen", "openai_compatible"]
EFFORTS = ["minimal", "low", "medium", "high"]
# providers with a built-in base URL; others need one
HAS_DEFAULT_URL = set(DEFAULT_BASE_URLS) | {"offline"}
MAX_KEY = 4096


class DemoRefused(PermissionError):
    """The demo plays a recording: it changes nothing and reads no credentials."""


def _lab(request: Request) -> Lab:
    return request.app.state.lab


def refuse_in_demo(request: Request, what: str = "configuration is disabled") -> None:
    if request.app.state.demo_only:
        raise DemoRefused(f"the demo plays a recorded session; {what}")


def _preset_view(
    preset: ModelPreset, local: set[str], stored: set[str], environment: ProviderKeys | None
) -> dict[str, Any]:
    """`key_source` says where the key comes from (stored, or `JUSTKERNEL_PROVIDER_KEYS`),
    never what it is."""
    own = preset.api_key_secret in stored if preset.api_key_secret else False
    from_env = not own and environment_key(preset, environment) is not None
    return {
        **preset.model_dump(mode="json"),
        "source": "local" if preset.name in local else "public",
        "has_key": own or from_env,
        "key_source": "stored" if own else "environment" if from_env else None,
    }


def _local_names(lab: Lab) -> set[str]:
    path = lab.settings.models_local_file
    if not path.is_file():
        return set()
    return set((tomllib.loads(path.read_text(encoding="utf-8")).get("models") or {}).keys())


async def list_models(request: Request) -> Response:
    lab = _lab(request)
    if request.app.state.demo_only:
        return JSONResponse({"models": [], "providers": PROVIDERS, "efforts": EFFORTS})
    presets = load_model_presets(lab.settings.models_local_file)
    stored = set(lab.secrets.names())
    local = _local_names(lab)
    return JSONResponse(
        {
            "models": [
                _preset_view(p, local, stored, lab.secrets.environment_keys)
                for p in presets.values()
            ],
            "providers": PROVIDERS,
            "efforts": EFFORTS,
        }
    )


def _clean(form: dict[str, Any]) -> dict[str, Any]:
    """Empty inputs mean "not set"; numbers arrive as text from a form."""
    out: dict[str, Any] = {}
    for key, value in form.items():
        if isinstance(value, str):
            value = value.strip()
        if value in ("", None):
            continue
        out[key] = value
    return out


@dataclass(frozen=True)
class ModelChange:
    """What saving a preset does to keys: store `key`, or copy `carried` (the key of the same
    preset at the same address) into the preset's own secret, or drop the preset's key."""

    preset: ModelPreset
    key: str | None
    carried: str | None


def _address(preset: ModelPreset) -> tuple[str, str]:
    url = preset.base_url or DEFAULT_BASE_URLS.get(preset.provider, "")
    return preset.provider, url.rstrip("/")


def validate_model_form(
    form: dict[str, Any],
    stored: set[str],
    existing: ModelPreset | None = None,
    environment: ProviderKeys | None = None,
) -> ModelChange:
    """The preset to save and what happens to its key. The client never names a secret: a
    key goes with its preset, and only as far as the preset's provider and base URL. No key
    is needed where `JUSTKERNEL_PROVIDER_KEYS` gives one for the preset's address."""
    body = _clean(form)
    if "api_key_secret" in body:
        message = "the lab names a preset's key itself; send the key as api_key"
        raise FormErrors({"api_key_secret": Problem("secret_named_by_lab", message)})
    key = body.pop("api_key", None)
    if key is not None and (not isinstance(key, str) or len(key) > MAX_KEY):
        message = f"must be text of at most {MAX_KEY} characters"
        raise FormErrors({"api_key": Problem("too_long", message, {"max": MAX_KEY})})
    parsed = parse_model(ModelPreset, body)
    own = None if parsed.provider == "offline" else preset_secret_name(parsed.name)
    preset = parsed.model_copy(update={"api_key_secret": own})
    same_address = existing is not None and _address(existing) == _address(preset)
    carried = None
    if key is None and same_address and existing is not None and existing.api_key_secret:
        carried = existing.api_key_secret if existing.api_key_secret in stored else None
    errors: dict[str, Problem] = {}
    if preset.provider not in HAS_DEFAULT_URL and not preset.base_url:
        message = f"provider {preset.provider} needs a base URL"
        errors["base_url"] = Problem("needs_base_url", message, {"provider": preset.provider})
    needs_key = preset.provider not in ("offline", "openai_compatible")
    if needs_key and key is None and carried is None and not environment_key(preset, environment):
        errors["api_key"] = (
            Problem("key_required", "enter the API key (it is stored encrypted, never shown again)")
            if existing is None or same_address
            else Problem("key_again", "a new provider or base URL needs its API key entered again")
        )
    if preset.provider == "offline" and key is not None:
        errors["api_key"] = Problem("offline_no_key", "the offline model takes no key")
    if errors:
        raise FormErrors(errors)
    return ModelChange(preset, key, carried)


def _apply_key(secrets: SecretsStore, change: ModelChange) -> None:
    own = change.preset.api_key_secret
    if own is None:
        return
    if change.key is not None:
        secrets.set(own, change.key)
    elif change.carried is None:
        secrets.delete(own)
    elif change.carried != own:
        value = secrets.get(change.carried)
        if value is not None:
            secrets.set(own, value.reveal())


async def save_model(request: Request) -> Response:
    refuse_in_demo(request)
    lab = _lab(request)
    form = await json_body(request)
    presets = load_model_presets(lab.settings.models_local_file)
    name = form.get("name")
    existing = presets.get(name) if isinstance(name, str) else None
    environment = lab.secrets.environment_keys
    change = validate_model_form(form, set(lab.secrets.names()), existing, environment)
    _apply_key(lab.secrets, change)
    save_local_preset(lab.settings.models_local_file, change.preset)
    stored = set(lab.secrets.names())
    view = _preset_view(change.preset, _local_names(lab), stored, environment)
    return JSONResponse({"model": view})


async def test_model(request: Request) -> Response:
    refuse_in_demo(request)
    lab = _lab(request)
    presets = load_model_presets(lab.settings.models_local_file)
    name = request.path_params["name"]
    if name not in presets:
        message = f"no model preset {name!r}"
        raise FormErrors({"name": Problem("no_such_preset", message, {"name": name})})
    preset = presets[name]
    if preset.provider == "offline":
        return JSONResponse(
            {"preset": name, "ok": True, "message": f"{name}: the offline model needs no test"}
        )
    from justkernel.agents.provider_check import test_connection

    report = await test_connection(preset, lab.secrets, request_timeout=20.0)
    body = report.to_dict()
    body.pop("error", None)
    body["message"] = hide_host_paths(redaction.scrub(body["message"]), lab.settings)
    body["reply"] = redaction.scrub(body["reply"]) if body.get("reply") else body.get("reply")
    return JSONResponse(body)


async def _runs_using(lab: Lab, name: str) -> list[dict[str, Any]]:
    """The live runs with a team (not exited) on preset `name`: `{"run", "teams"}` each."""
    by_run: dict[str, list[str]] = {}
    for team in await lab.teams.using_preset(name):
        by_run.setdefault(team.run_id, []).append(team.id)
    users = []
    for run_id, team_ids in by_run.items():
        run = await lab.runs.get(run_id)
        if run.mode == "live" and not run.read_only:
            users.append({"run": run_id, "teams": team_ids})
    return users


async def delete_model(request: Request) -> Response:
    """Delete a local preset and its stored key. The offline preset, a shipped one and one a
    team of a live run still uses stay (409, saying which run and teams)."""
    refuse_in_demo(request)
    lab = _lab(request)
    name = request.path_params["name"]
    presets = load_model_presets(lab.settings.models_local_file)
    preset = presets.get(name)
    if preset is None:
        raise Refused(404, "no_such_preset", f"no model preset {name!r}", name=name)
    if preset.provider == "offline":
        message = f"{name} is the offline model; it cannot be deleted"
        raise Refused(409, "offline_preset", message, name=name)
    if name in shipped_preset_names():
        message = f"{name} ships with the lab (models.toml); it cannot be deleted"
        raise Refused(409, "shipped_preset", message, name=name)
    users = await _runs_using(lab, name)
    if users:
        where = "; ".join(f"run {u['run']} (teams {', '.join(u['teams'])})" for u in users)
        message = f"{name} is still used by {where}"
        first = users[0]
        raise Refused(
            409,
            "preset_in_use",
            message,
            name=name,
            run=first["run"],
            teams=", ".join(first["teams"]),
            runs=users,
        )
    delete_local_preset(lab.settings.models_local_file, name)
    lab.secrets.delete(preset_secret_name(name))
    return JSONResponse({"deleted": name})


async def get_workers(request: Request) -> Response:
    lab = _lab(request)
    hosts = [] if request.app.state.demo_only else list_hosts(lab.settings.hosts_file)
    task = request.app.state.tasks.load() if request.app.state.tasks else None
    return JSONResponse(
        {
            "hosts": hosts,
            "local_slots": task.slots if task else None,
            "hosts_file": shown_path(lab.settings.hosts_file),
        }
    )


async def save_worker_host(request: Request) -> Response:
    refuse_in_demo(request)
    lab = _lab(request)
    host = save_host(lab.settings.hosts_file, lab.secrets, await json_body(request))
    return JSONResponse({"host": host})


async def delete_worker_host(request: Request) -> Response:
    refuse_in_demo(request)
    lab = _lab(request)
    if not delete_host(lab.settings.hosts_file, request.path_params["name"]):
        name = request.path_params["name"]
        raise FormErrors({"name": Problem("no_such_host", f"no host {name!r}", {"name": name})})
    return JSONResponse({"deleted": request.path_params["name"]})


async def get_judger(request: Request) -> Response:
    controls = request.app.state.judger
    return JSONResponse({"settings": controls.settings() if controls else None})


async def put_judger(request: Request) -> Response:
    refuse_in_demo(request)
    controls = request.app.state.judger
    return JSONResponse({"settings": controls.update(await json_body(request))})


async def demo_refused(_request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "demo", "detail": str(exc)}, status_code=403)


async def config_broken(request: Request, exc: Exception) -> Response:
    """A file of the lab's own (hosts.toml, models.local.toml) is invalid: say which and why."""
    detail = hide_host_paths(str(exc), _lab(request).settings)
    return JSONResponse({"error": "config", "detail": detail}, status_code=500)


routes = [
    Route("/api/config/models", list_models, methods=["GET"]),
    Route("/api/config/models", save_model, methods=["POST"]),
    Route("/api/config/models/{name}", delete_model, methods=["DELETE"]),
    Route("/api/config/models/{name}/test", test_model, methods=["POST"]),
    Route("/api/config/workers", get_workers, methods=["GET"]),
    Route("/api/config/workers/hosts", save_worker_host, methods=["POST"]),
    Route("/api/config/workers/hosts/{name}", delete_worker_host, methods=["DELETE"]),
    Route("/api/config/judger", get_judger, methods=["GET"]),
    Route("/api/config/judger", put_judger, methods=["PUT"]),
]

exception_handlers = {DemoRefused: demo_refused, ConfigError: config_broken}
