"""The docs promise what the code does: every setting is documented in .env.example."""

from __future__ import annotations

import re
from pathlib import Path

from justkernel.settings.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_env_example_documents_every_setting() -> None:
    text = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^(JUSTKERNEL_[A-Z_]+)=", text, flags=re.MULTILINE))
    expected = {f"JUSTKERNEL_{name.upper()}" for name in Settings.model_fields}
    assert documented == expected


def test_env_example_defaults_are_the_code_defaults() -> None:
    text = (ROOT / ".env.example").read_text()
    values = dict(re.findall(r"^JUSTKERNEL_([A-Z_]+)=(.*)$", text, flags=re.MULTILINE))
    for name, field in Settings.model_fields.items():
        shown = values[name.upper()]
        if field.default_factory is not None or field.default is None:
            assert shown == "", name
        else:
            assert shown == str(field.default), name


def test_readme_gives_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "./start.sh test" in readme
    assert re.search(r"^\s*\./start\.sh\s*$", readme, flags=re.MULTILINE)
    assert "./start.sh test" in (ROOT / ".ci" / "run").read_text()
