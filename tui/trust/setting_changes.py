"""What a project's config would change, as the user is shown it: every setting as one line of plain text, the
changes against the user's own settings (those that redirect requests, lift an approval or the sandbox, or start
a program first), and the keys a config file sets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from tui.base.config import Settings
from tui.text.terminal_text import visible
from tui.trust.hook_entries import hook_danger, is_hook_key, shown_hooks
from tui.trust.server_entries import SHOWN_VALUE_LIMIT, shown_server
from tui.trust.store import TrustRecord

__all__ = ["MCP_SERVERS_KEY", "NOT_SET", "SettingChange", "describe_changes", "flat_keys", "setting_danger",
           "setting_key", "shown_settings", "shown_value"]

NOT_SET = "(not set)"


def shown_value(value: object) -> str:
    """A setting's value as one line of plain text: strings quoted with every control character escaped
    (and the rest made visible), ``(not set)`` for none, cut at :data:`SHOWN_VALUE_LIMIT` characters."""
    if value is None:
        text = NOT_SET
    elif isinstance(value, str):
        text = visible(json.dumps(value, ensure_ascii=False))
    else:
        text = visible(str(value))
    if len(text) > SHOWN_VALUE_LIMIT:
        text = text[: SHOWN_VALUE_LIMIT - 1] + "…"
    return text


@dataclass(frozen=True)
class SettingChange:
    """One setting the project config changes: ``key`` from ``current`` to ``project`` (both shown text)."""

    key: str
    current: str
    project: str
    since_trust: bool = False
    """The value differs from the one the user trusted earlier (only for a changed config)."""
    danger: str = ""
    """Why this change matters most (it sends requests and keys elsewhere, or skips an approval or the sandbox);
    empty for the others. Dangerous changes are listed first, and the app keeps them in view."""


MCP_SERVERS_KEY = "mcp.servers"
REDIRECTING_KEYS = frozenset({"base_url"})
"""Settings that send the requests, and the API key with them, to another server."""
UNGUARDING_VALUES = {"tools.writes": "always", "tools.commands": "always", "tools.mcp": "always",
                     "tools.network": True, "tools.sandbox": False}
"""Settings whose project value lets the agent act without asking, or outside the sandbox's limits."""


def setting_danger(key: str, value: object) -> str:
    """Why a project's ``key = value`` matters most, in a few words; empty when it is an ordinary setting."""
    if key in REDIRECTING_KEYS and value is not None:
        return "sends your requests and API key there"
    if key in UNGUARDING_VALUES and value == UNGUARDING_VALUES[key]:
        return "sandbox limits lifted" if key.startswith(("tools.network", "tools.sandbox")) else "no more asking"
    if key.startswith(MCP_SERVERS_KEY + "."):
        return "runs a program as you"
    if is_hook_key(key):
        return hook_danger(key)
    return ""


def shown_settings(settings: Settings) -> dict[str, str]:
    """Every setting as shown text, by key: ``mcp.servers`` one entry per server (``mcp.servers.NAME`` → its
    command line or URL), never the tuple's repr."""
    shown: dict[str, str] = {}
    for key, value in flatten_settings(settings).items():
        if key == MCP_SERVERS_KEY:
            shown |= {f"{MCP_SERVERS_KEY}.{visible(server.name)}": shown_server(server) for server in value}
        elif is_hook_key(key):
            continue  # below, one entry per hook
        else:
            shown[visible(key)] = shown_value(value)
    return shown | shown_hooks(settings.hooks)


def describe_changes(current: Settings, with_project: Settings, earlier: TrustRecord | None) -> list[SettingChange]:
    """The settings that differ between ``current`` (without the project config) and ``with_project``: those that
    redirect requests, lift an approval or the sandbox, or start a program first (see :func:`setting_danger`)."""
    before, after = shown_settings(current), shown_settings(with_project)
    raw = flatten_settings(with_project)
    changes = []
    for key, shown in after.items():
        old = before.get(key)
        if old == shown:
            continue
        since = earlier is not None and earlier.settings.get(key) != shown
        if since and earlier is not None and is_hook_key(key):  # numbered after the user's: compared by what runs
            event = key.rsplit(".", 1)[0]
            since = shown not in {value for recorded, value in earlier.settings.items()
                                  if is_hook_key(recorded) and recorded.rsplit(".", 1)[0] == event}
        changes.append(SettingChange(key, old if old is not None else NOT_SET, shown, since,
                                     setting_danger(key, raw.get(key, shown))))
    return sorted(changes, key=lambda change: not change.danger)


def flat_keys(prefix: str, table: dict[str, object]) -> list[tuple[str, object]]:
    """The keys a config file sets, as ``table.key`` → value."""
    keys: list[tuple[str, object]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            keys += flat_keys(f"{prefix}{key}.", value)
        else:
            keys.append((visible(f"{prefix}{key}"), value))
    return keys


def setting_key(raw_key: str) -> str:
    """The :func:`shown_settings` key a config file's ``table.key`` sets (``mcp.servers.NAME.command`` →
    ``mcp.servers.NAME``)."""
    if raw_key.startswith(MCP_SERVERS_KEY + "."):
        return ".".join(raw_key.split(".")[:3])
    return raw_key


def flatten_settings(settings: Settings) -> dict[str, Any]:
    """Every setting as ``key`` or ``table.key`` → value (what a config file can set), for showing what a
    config changes."""
    return dict(_flatten("", settings))


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if is_dataclass(value) and not isinstance(value, type):
        for item in fields(value):
            if item.name in _NOT_CONFIG_KEYS:
                continue
            yield from _flatten(f"{prefix}{item.name}.", getattr(value, item.name))
    elif isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _flatten(f"{prefix}{key}.", item)
    else:
        yield prefix[:-1], value


_NOT_CONFIG_KEYS = {"window_origin"}
