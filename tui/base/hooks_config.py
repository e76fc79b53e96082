"""``[[hooks.EVENT]]`` tables: commands run at points of a turn (``pre_tool``, ``post_tool``, ``pre_compact``,
``post_compact``, ``stop``), each with an optional ``matcher`` (a glob: the tool's name for ``pre_tool`` and
``post_tool``, the compaction's trigger — ``auto``, ``manual``, ``preflight`` — for ``pre_compact`` and
``post_compact``, how the turn ended — ``finished``, ``failed``, ``cancelled`` — for ``stop``), a ``timeout`` in
seconds, and ``sandbox`` (``false`` runs the hook unsandboxed: honoured only from the user's own config, see
:func:`tui.base.config_layers.without_user_only_keys`)."""

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
    """One hook: the shell command, what it applies to, how long it may run, whether in the sandbox."""

    command: str
    matcher: str | None = None
    timeout: float = DEFAULT_HOOK_TIMEOUT
    sandbox: bool = True
    """``False`` only when the user's own config says ``sandbox = false`` (a project's is ignored)."""

    def matches(self, subject: str) -> bool:
        """Whether the hook applies to ``subject`` — a tool's name, a compaction's trigger, a turn's ending (no
        matcher: every one)."""
        return self.matcher is None or fnmatchcase(subject, self.matcher)


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
    unknown = set(entry) - {"command", "matcher", "timeout", "sandbox"}
    if unknown:
        raise HooksConfigError(f"{where}: unknown key {sorted(unknown)[0]}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HooksConfigError(f"{where}: command must be a non-empty string")
    matcher = entry.get("matcher")
    if matcher is not None and (not isinstance(matcher, str) or not matcher):
        raise HooksConfigError(f"{where}: matcher must be a name or a glob")
    timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_HOOK_TIMEOUT:
        raise HooksConfigError(f"{where}: timeout must be seconds, more than 0 and at most {MAX_HOOK_TIMEOUT:g}")
    sandbox = entry.get("sandbox", True)
    if not isinstance(sandbox, bool):
        raise HooksConfigError(f"{where}: sandbox must be true or false")
    return HookSpec(command, matcher, float(timeout), sandbox)
