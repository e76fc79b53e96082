"""A project config's ``[[hooks.EVENT]]`` as the trust prompt shows them: one line per hook with the command it
would run (escaped, cut), its matcher and timeout, and why it matters."""

from __future__ import annotations

from tui.base.hooks_config import DEFAULT_HOOK_TIMEOUT, HOOK_EVENTS, HookSettings, HookSpec
from tui.text.terminal_text import visible

HOOKS_KEY = "hooks"
HOOK_LIMIT = 320
"""A hook's command as shown is cut past this many characters (the user must read it; a hostile one is huge)."""
WHEN = {
    "pre_tool": "before tool calls",
    "post_tool": "after tool calls",
    "pre_compact": "before compactions",
    "post_compact": "after compactions; its output joins the context",
    "stop": "when a turn ends",
}
MATCHES = {"pre_tool": "tools", "post_tool": "tools", "pre_compact": "triggers", "post_compact": "triggers",
           "stop": "endings"}
"""What a hook's matcher is matched against, by event (a tool's name, a compaction's trigger, a turn's ending)."""


def shown_hook(spec: HookSpec, event: str) -> str:
    """What ``spec`` (an ``event`` hook) runs, one line of plain text: the command, then its matcher (named by
    what it matches for that event) and a timeout not the default."""
    text = visible(spec.command).replace("\n", "␊").replace("\r", "␍")
    if len(text) > HOOK_LIMIT:
        text = text[: HOOK_LIMIT - 1] + "…"
    if spec.matcher is not None:
        text += f"  ({MATCHES.get(event, 'matcher')}: {visible(spec.matcher)[:80]})"
    if spec.timeout != DEFAULT_HOOK_TIMEOUT:
        text += f"  (timeout {spec.timeout:g} s)"
    return text


def shown_hooks(hooks: HookSettings) -> dict[str, str]:
    """Every hook by key, ``hooks.EVENT.N`` (N from 1, in the config's order) → :func:`shown_hook`."""
    return {f"{HOOKS_KEY}.{event}.{number}": shown_hook(spec, event)
            for event in HOOK_EVENTS for number, spec in enumerate(getattr(hooks, event), start=1)}


def is_hook_key(key: str) -> bool:
    """Whether ``key`` (a :func:`shown_hooks` key, or the flattened ``hooks.EVENT``) is a hook's."""
    return key.startswith(HOOKS_KEY + ".")


def hook_danger(key: str) -> str:
    """Why a project's hook matters: it runs a command (and when). A project's hooks run after the user's, never
    instead of them, so none of the user's is ever dropped."""
    event = key.split(".")[1] if key.count(".") >= 1 else ""
    return f"runs a command {WHEN.get(event, 'during turns')}"
