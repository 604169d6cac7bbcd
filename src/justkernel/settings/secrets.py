"""Encrypted secrets (API keys, SSH passwords) in a per-user folder outside the repository.

Values are encrypted with Fernet under a key file of mode 0600. A decrypted value is handed out
as `Secret`, whose repr and str are redacted, and is registered with `redaction` so that log
records that somehow carry it are scrubbed before they are written.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.fernet import Fernet, InvalidToken

from justkernel.settings import redaction
from justkernel.store.files import SecretFile, SecretFileError, write_private

if TYPE_CHECKING:
    from justkernel.settings.provider_keys import ProviderKeys

_NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")  # `preset:<name>:api_key` fits


class SecretsError(Exception):
    """The secrets store cannot be read or a name is invalid."""


class Secret:
    """A secret value that never shows itself in a repr, a str or a format."""

    __slots__ = ("_value", "name")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self._value = value

    def reveal(self) -> str:
        """The plain value, for the one call that needs it (an HTTP header, an SSH login)."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self.name!r}, '***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)


class SecretsStore:
    """Names → encrypted values, in `secrets.json` beside `secret.key` in the config folder;
    beside them, the provider keys the environment gives (`JUSTKERNEL_PROVIDER_KEYS`), which
    travel with the store so every place that builds a model from it sees them too."""

    def __init__(self, config_dir: Path, environment_keys: ProviderKeys | None = None) -> None:
        self.environment_keys = environment_keys
        self.folder = config_dir.expanduser()
        self.key_file = self.folder / "secret.key"
        self.data_file = self.folder / "secrets.json"
        self._file = SecretFile(self.data_file)
        self._lock = threading.Lock()

    def _fernet(self) -> Fernet:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.key_file.exists():
            write_private(self.key_file, Fernet.generate_key())
        try:
            return Fernet(self.key_file.read_bytes().strip())
        except ValueError as exc:
            raise SecretsError(f"{self.key_file}: not a valid key file") from exc

    def _load(self) -> dict[str, str]:
        try:
            return self._file.load()
        except SecretFileError as exc:
            raise SecretsError(str(exc)) from exc

    @staticmethod
    def _check_name(name: str) -> None:
        if not _NAME_RE.match(name):
            raise SecretsError(f"invalid secret name {name!r}: use letters, digits, _ . : -")

    def set(self, name: str, value: str) -> None:
        """Store (or replace) one secret, encrypted."""
        self._check_name(name)
        if not value:
            raise SecretsError(f"secret {name!r}: empty value")
        with self._lock:
            token = self._fernet().encrypt(value.encode("utf-8")).decode("ascii")
            data = self._load()
            data[name] = token
            self._file.save(data)
        redaction.register(value)

    def get(self, name: str) -> Secret | None:
        """The decrypted secret, or None when it is not stored."""
        self._check_name(name)
        with self._lock:
            token = self._load().get(name)
            if token is None:
                return None
            try:
                value = self._fernet().decrypt(token.encode("ascii")).decode("utf-8")
            except InvalidToken as exc:
                raise SecretsError(
                    f"secret {name!r} cannot be decrypted with {self.key_file}"
                ) from exc
        redaction.register(value)
        return Secret(name, value)

    def delete(self, name: str) -> bool:
        self._check_name(name)
        with self._lock:
            data = self._load()
            if name not in data:
                return False
            del data[name]
            self._file.save(data)
            return True

    def names(self) -> list[str]:
        """Stored names only; values never leave this class except through `get`."""
        with self._lock:
            return sorted(self._load())
