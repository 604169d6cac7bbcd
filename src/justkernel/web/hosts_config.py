"""Edit `hosts.toml` (SSH worker hosts) from the dashboard: validated by the executor's own
schema (`workers.hosts.HostConfig`), written atomically with tomli-w, passwords to the
secrets store (the file only names the secret)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from justkernel.settings.secrets import SecretsStore
from justkernel.web.forms import FormErrors, Problem, parse_model
from justkernel.workers.hosts import HostConfig, load_hosts


def password_secret_name(host: str) -> str:
    return f"ssh_{host}_password"


def _read_table(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(tomli_w.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


def list_hosts(path: Path) -> list[dict[str, Any]]:
    return [h.model_dump(mode="json") for h in load_hosts(path)]


ADDRESS_FIELDS = ("address", "port", "user")


def _same_address(old: dict[str, Any], new: dict[str, Any]) -> bool:
    defaults = {"port": 22}
    return all(old.get(f, defaults.get(f)) == new.get(f, defaults.get(f)) for f in ADDRESS_FIELDS)


def save_host(path: Path, secrets: SecretsStore, form: dict[str, Any]) -> dict[str, Any]:
    """Add or replace one host; a `password` goes to the secrets store, never to the file.

    Fields the form does not show (`worker_command`, `known_hosts_file`, ...) keep the values
    already in the file, so editing a host by hand and through the dashboard can be mixed. The
    client never names a secret, and a stored password goes only to the address, port and user
    it was entered for: changing one of them needs the password again."""
    body = {k: v for k, v in form.items() if v not in (None, "")}
    if "password_secret" in body:
        message = "the lab names a host's password itself; send it as password"
        raise FormErrors({"password_secret": Problem("secret_named_by_lab", message)})
    password = body.pop("password", None)
    if password is not None and not isinstance(password, str):
        raise FormErrors({"password": Problem("not_text", "must be text")})
    name = str(body.get("name", ""))
    doc = _read_table(path)
    hosts = doc.setdefault("hosts", {})
    old = hosts.get(name) or {}
    body = {**old, **body}
    moved = bool(old) and not _same_address(old, body)
    if moved and not password and body.pop("password_secret", None) and "key_file" not in body:
        message = "the address, port or user changed: enter the password for it again"
        raise FormErrors({"password": Problem("password_again", message)})
    if password:
        body["password_secret"] = password_secret_name(name or "host")
    host = parse_model(HostConfig, body)
    if host.key_file is None and host.password_secret is None:
        message = "give a key file or a password"
        raise FormErrors({"key_file": Problem("key_or_password", message)})
    if host.key_file is not None and not host.key_file.expanduser().is_file():
        # checked here, not in the schema: hosts.toml may name a key another machine has
        message = f"no such file on the lab machine: {host.key_file}"
        raise FormErrors({"key_file": Problem("no_such_file", message)})
    if password:
        secrets.set(host.password_secret or password_secret_name(host.name), password)
    elif moved and host.password_secret is None:
        secrets.delete(password_secret_name(host.name))
    hosts[host.name] = host.model_dump(mode="json", exclude={"name"}, exclude_defaults=True)
    _write(path, doc)
    return host.model_dump(mode="json")


def delete_host(path: Path, name: str) -> bool:
    doc = _read_table(path)
    hosts = doc.get("hosts") or {}
    if name not in hosts:
        return False
    del hosts[name]
    _write(path, doc)
    return True
