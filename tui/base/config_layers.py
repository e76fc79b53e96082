"""Config files as layers: each file read (a data directory's without following a link) and parsed into a
:class:`ConfigLayer`, a project's layer stripped of the keys only the user may set, and the layers validated one by
one and merged (a later layer's keys winning, table by table; hooks adding up) into :class:`~tui.base.config.Settings`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.base.config import ConfigError, Settings, settings_from_mapping
from tui.base.nofollow import LinkRefusedError, open_file

__all__ = ["MAX_CONFIG_BYTES", "USER_ONLY_HOOK_KEYS", "USER_ONLY_TABLES", "USER_ONLY_TOOL_KEYS", "ConfigLayer",
           "load_settings", "merge_tables", "parse_config", "read_config_file", "settings_from_layers",
           "without_user_only_keys"]

MAX_CONFIG_BYTES = 1_000_000
"""A config file larger than this is refused (a real one is a few hundred bytes)."""


@dataclass(frozen=True)
class ConfigLayer:
    """One parsed config file (not validated yet): where it came from and its TOML tables."""

    source: str
    """Shown in error messages: the file's path."""
    data: dict[str, Any]


def parse_config(raw: bytes, source: str) -> ConfigLayer:
    """Parse a config file's bytes; raises :class:`ConfigError` for a file too large, not UTF-8 or not TOML."""
    import tomllib  # here, not for the first frame: a new user has no config file

    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {source} is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"invalid config file {source}: {error}") from None
    return ConfigLayer(source, data)


def read_config_file(path: Path, *, required: bool, follow_links: bool = True) -> ConfigLayer | None:
    """Read and parse ``path``; ``None`` when an optional file is missing. Raises :class:`ConfigError` for a
    missing required file or an unreadable one.

    ``follow_links``: ``True`` for a file the user named (``--config``, their own config.toml); ``False`` for
    the config.toml of a data directory, which is deep-tui's: a link there, or on the way, is refused."""
    try:
        if follow_links:
            with path.open("rb") as handle:
                raw = handle.read(MAX_CONFIG_BYTES + 1)
        else:
            with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:
                raw = handle.read(MAX_CONFIG_BYTES + 1)
    except LinkRefusedError as error:
        raise ConfigError(f"refusing the config file: {error}") from None
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file not found: {path}") from None
        return None
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
    return parse_config(raw, str(path))


USER_ONLY_TOOL_KEYS = frozenset({"mode"})
"""``[tools]`` keys only the user's own config (or a flag) may set: a project's config never chooses the mode."""
USER_ONLY_TABLES = frozenset({"ui"})
"""Tables only the user's own config may set: a project never decides what is written to the user's terminal."""


USER_ONLY_HOOK_KEYS = frozenset({"sandbox"})
"""``[[hooks.EVENT]]`` keys only the user's own config may set: a project's hook always runs sandboxed."""


def without_user_only_keys(layer: ConfigLayer) -> ConfigLayer:
    """A project's config layer without the keys only the user may set (they are ignored, not an error)."""
    data = layer.data
    if USER_ONLY_TABLES & data.keys():
        data = {key: value for key, value in data.items() if key not in USER_ONLY_TABLES}
    tools = data.get("tools")
    if isinstance(tools, dict) and USER_ONLY_TOOL_KEYS & tools.keys():
        data = {**data, "tools": {key: value for key, value in tools.items() if key not in USER_ONLY_TOOL_KEYS}}
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        kept_hooks = {event: [{key: value for key, value in entry.items() if key not in USER_ONLY_HOOK_KEYS}
                              if isinstance(entry, dict) else entry for entry in entries]
                      if isinstance(entries, list) else entries for event, entries in hooks.items()}
        if kept_hooks != hooks:
            data = {**data, "hooks": kept_hooks}
    return layer if data is layer.data else ConfigLayer(layer.source, data)


def merge_tables(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over``'s keys replace ``base``'s; a table present in both is merged key by key (recursively)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_tables(merged[key], value)
        else:
            merged[key] = value
    return merged


def settings_from_layers(layers: Sequence[ConfigLayer]) -> Settings:
    """Validated :class:`Settings` from config layers, lowest precedence first (none: the defaults).

    Each layer must be valid on its own (its errors name its file); then the merged tables are validated
    together (a threshold in one file against one in another)."""
    if not layers:
        return Settings()
    for layer in layers:
        settings_from_mapping(layer.data, source=layer.source)
    if len(layers) == 1:
        return settings_from_mapping(layers[0].data, source=layers[0].source)
    merged: dict[str, Any] = {}
    hooks: dict[str, list[Any]] = {}
    for layer in layers:
        merged = merge_tables(merged, layer.data)
        for event, entries in (layer.data.get("hooks") or {}).items():
            hooks.setdefault(event, []).extend(entries)  # each layer is valid: a list of tables
    if hooks:  # hooks add up: a project's run after the user's, never instead of them
        merged["hooks"] = hooks
    return settings_from_mapping(merged, source=" + ".join(layer.source for layer in layers))


def load_settings(path: Path, *, required: bool) -> Settings:
    """Read one config file ``path``; a missing optional file gives the defaults.

    Raises :class:`ConfigError` for an unreadable file, invalid TOML or a bad value.
    """
    layer = read_config_file(path, required=required)
    return settings_from_layers([layer] if layer is not None else [])
