"""``[[hooks.EVENT]]`` tables: commands run at points of a turn (``pre_tool``, ``post_tool``, ``pre_compact``,
``post_compact``, ``stop``), each with an optional tool-name ``matcher`` (a glob) and a ``timeout`` in seconds."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

HOOK_EVENTS = ("pre_tool", "post_tool", "pre_compact", "post_compact", "stop")
DEFAULT_HOOK_TIMEOUT = 10.0
MAX_HOOK_TIMEOUT = 600.0
MAX_HOOKS_PER_EVENT = 20


class HooksConfigError(ValueError):
    """A ``[[hooks.*]]`` table that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class HookSpec:
    """One hook: the shell command, which tools it applies to, how long it may run."""

    command: str
    matcher: str | None = None
    timeout: float = DEFAULT_HOOK_TIMEOUT

    def matches(self, tool_name: str) -> bool:
        """Whether the hook applies to ``tool_name`` (no matcher: every tool)."""
        return self.matcher is None or fnmatchcase(tool_name, self.matcher)


@dataclass(frozen=True)
class HookSettings:
    """The hooks of each event, in the config's order."""

    pre_tool: tuple[HookSpec, ...] = ()
    post_tool: tuple[HookSpec, ...] = ()
    pre_compact: tuple[HookSpec, ...] = ()
    post_compact: tuple[HookSpec, ...] = ()
    stop: tuple[HookSpec, ...] = ()

    def __bool__(self) -> bool:
        return any(getattr(self, event) for event in HOOK_EVENTS)


def parse_hooks_table(value: Any, source: str) -> HookSettings:
    """``[hooks]`` as read from TOML → :class:`HookSettings`; raises :class:`HooksConfigError`."""
    if not isinstance(value, dict):
        raise HooksConfigError(f"{source}: hooks must be a table of [[hooks.EVENT]] arrays")
    found: dict[str, tuple[HookSpec, ...]] = {}
    for event, entries in value.items():
        if event not in HOOK_EVENTS:
            raise HooksConfigError(f"{source}: unknown hook event hooks.{event} (known: {', '.join(HOOK_EVENTS)})")
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise HooksConfigError(f"{source}: hooks.{event} must be an array of tables ([[hooks.{event}]])")
        if len(entries) > MAX_HOOKS_PER_EVENT:
            raise HooksConfigError(f"{source}: more than {MAX_HOOKS_PER_EVENT} hooks.{event}")
        found[event] = tuple(_spec(entry, f"{source}: hooks.{event}") for entry in entries)
    return HookSettings(**found)


def _spec(entry: dict[str, Any], where: str) -> HookSpec:
    unknown = set(entry) - {"command", "matcher", "timeout"}
    if unknown:
        raise HooksConfigError(f"{where}: unknown key {sorted(unknown)[0]}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HooksConfigError(f"{where}: command must be a non-empty string")
    matcher = entry.get("matcher")
    if matcher is not None and (not isinstance(matcher, str) or not matcher):
        raise HooksConfigError(f"{where}: matcher must be a tool name or glob")
    timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_HOOK_TIMEOUT:
        raise HooksConfigError(f"{where}: timeout must be seconds, more than 0 and at most {MAX_HOOK_TIMEOUT:g}")
    return HookSpec(command, matcher, float(timeout))
