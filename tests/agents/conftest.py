"""Team tests use the lab runtime fixtures of tests/conftest.py."""

from tests.support.labs import open_folder, scripted_preset

__all__ = ["open_folder", "scripted_preset"]
