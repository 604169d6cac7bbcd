"""Configuration: environment and .env settings, model presets, the encrypted secrets store."""

from justkernel.settings.config import ConfigError, Settings, load_settings
from justkernel.settings.models import ModelPreset, load_model_presets, save_local_preset

__all__ = [
    "ConfigError",
    "ModelPreset",
    "Settings",
    "load_model_presets",
    "load_settings",
    "save_local_preset",
]
