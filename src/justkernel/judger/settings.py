"""The Judger's settings: one JSON file in the data folder, read by every lab process.

`justkernel run`, the lab server and `justkernel judger set` share `DATA_DIR/judger.json`, and a
running Judger re-reads it when it changes, so a setting changed from the dashboard or the CLI
takes effect on the next pass without a restart.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from justkernel.settings.models import ModelPreset

log = logging.getLogger("justkernel.judger")

MAX_DAILY_QUOTA = 50  # the contest's limit per day (DESIGN.md §4), the default local cap
RULES = "rules"  # the rule-based reviewer: no model
FILE_NAME = "judger.json"

Strategy = Literal["verified", "official-driven"]


class JudgerSettings(BaseModel):
    """What a user may set; the Judger's behaviour follows from these names."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(default=RULES, min_length=1, max_length=64)  # "rules" or a preset
    # None (the daily limit left empty): no local cap; every attempt is still recorded, a source
    # is still never sent twice, and the platform's 429 answers still hold the Judger back
    quota_per_day: int | None = Field(default=MAX_DAILY_QUOTA, ge=0, le=MAX_DAILY_QUOTA)
    margin: float = Field(default=0.01, ge=0, lt=1)  # a challenger must beat the bar by this
    strategy: Strategy = "verified"
    # official-driven only: how many of the day's submissions (within the quota) may go to
    # sources that failed local precision (the official per-point results are the diagnosis)
    diagnosis_per_day: int = Field(default=10, ge=0, le=MAX_DAILY_QUOTA)
    human_approval: bool = False
    poll_seconds: float = Field(default=2.0, gt=0, le=300)

    @property
    def freezes_unverified(self) -> bool:
        """Whether compile-passing sources that failed local precision are frozen too."""
        return self.strategy == "official-driven" and self.diagnosis_per_day > 0


def model_problem(name: str, presets: Mapping[str, ModelPreset]) -> str | None:
    """Why `name` cannot be the Judger's reviewer, or None when it can."""
    if name == RULES:
        return None
    preset = presets.get(name)
    if preset is None:
        return f"unknown model preset {name!r} (known: rules, {', '.join(sorted(presets))})"
    if preset.provider == "offline":
        return f"{name!r} is the offline playbook: it cannot review code (use rules)"
    return None


class JudgerSettingsError(ValueError):
    """The settings file exists but is not valid; the message names the file and the fields."""


class JudgerSettingsFile:
    """`DATA_DIR/judger.json`, re-read only when it changes (cheap to ask on every pass)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / FILE_NAME
        self._seen: tuple[int, int] | None = None
        self._cached = JudgerSettings()

    def load(self) -> JudgerSettings:
        """The stored settings; the defaults when there is no file. An invalid file raises
        `JudgerSettingsError` (it is never silently replaced by defaults)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._seen, self._cached = None, JudgerSettings()
            return self._cached
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._seen:
            try:
                self._cached = JudgerSettings.model_validate_json(self.path.read_bytes())
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise JudgerSettingsError(f"{self.path}: {problems}") from None
            self._seen = stamp
        return self._cached

    def current(self) -> JudgerSettings:
        """The stored settings, or the last good ones while the file is invalid: a process
        that only follows the settings (the scheduler) must not fail over a broken file."""
        try:
            return self.load()
        except JudgerSettingsError as exc:
            log.warning("keeping the previous Judger settings: %s", exc)
            return self._cached

    def save(self, settings: JudgerSettings) -> JudgerSettings:
        """Write atomically (a crash leaves the old file or the new one, never half)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(settings.model_dump(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)
        return self.load()
