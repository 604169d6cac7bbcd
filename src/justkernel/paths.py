"""Where the app finds its bundled resources, in a checkout and in an installed wheel.

The wheel carries `resources/` inside the package as `justkernel/resources`; an editable
install (a checkout) reads the top-level `resources/` folder directly.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def resources_dir() -> Path:
    """The folder holding operators, skills, web assets and the demo session."""
    bundled = _PACKAGE_DIR / "resources"
    if bundled.is_dir():
        return bundled
    checkout = _PACKAGE_DIR.parent.parent / "resources"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"resources folder not found next to {_PACKAGE_DIR}")


@cache
def public_models_file() -> Path:
    """The public model presets (`models.toml`), bundled or at the checkout root."""
    bundled = _PACKAGE_DIR / "resources" / "models.toml"
    if bundled.is_file():
        return bundled
    return _PACKAGE_DIR.parent.parent / "models.toml"
