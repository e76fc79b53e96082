"""The ``[provider]`` table: defaults a demanding user expects, every key validated and named, flags win."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.base.config import ConfigError, ProviderSettings, settings_from_mapping
from tui.base.config_layers import load_settings


def test_the_defaults_bound_every_request() -> None:
    provider = settings_from_mapping({}).provider
    assert (provider.connect_timeout, provider.read_timeout, provider.retries) == (10.0, 120.0, 3)
    assert (provider.backoff_initial, provider.backoff_max, provider.retry_after_max) == (1.0, 30.0, 60.0)


def test_the_table_is_read_and_flags_override_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[provider]\nconnect_timeout = 3\nread_timeout = 45.5\nretries = 5\nretry_after_max = 10\n")
    settings = load_settings(path, required=True)
    assert settings.provider == ProviderSettings(connect_timeout=3.0, read_timeout=45.5, retries=5,
                                                 retry_after_max=10.0)
    overridden = settings.with_overrides(read_timeout=5.0, retries=0)
    assert (overridden.provider.read_timeout, overridden.provider.retries) == (5.0, 0)
    assert overridden.provider.connect_timeout == 3.0, "a flag changes only its own key"


@pytest.mark.parametrize(("table", "message"), [
    ({"read_timeout": 0}, "provider.read_timeout must be between 0.01 and 86400 seconds"),
    ({"connect_timeout": "10"}, "provider.connect_timeout must be a "),
    ({"retries": 1.5}, "provider.retries must be a whole number"),
    ({"retries": 21}, "provider.retries must be between 0 and 20"),
    ({"backoff_max": -1}, "provider.backoff_max must be between 0 and 3600 seconds"),
    ({"timeout": 5}, "unknown key provider.timeout"),
])
def test_a_bad_value_names_its_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        settings_from_mapping({"provider": table})


def test_provider_must_be_a_table() -> None:
    with pytest.raises(ConfigError, match=r"\[provider\] must be a table"):
        settings_from_mapping({"provider": 3})
