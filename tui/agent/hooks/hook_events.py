"""What the hooks tell the user while a turn runs: a hook that failed, hung or flooded (a warning), or what a
``post_compact`` hook added to the context (information).

Delivered to a session's subscribers like the provider events (the app shows a toast at once, ``deep-tui run``
prints a line on stderr), not written to events.jsonl: they describe a moment. No pydantic-ai here, so the app
can import them before it is loaded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from tui.chain.events import ChainEvent


@dataclass(frozen=True, kw_only=True)
class HookNotice(ChainEvent):
    """One hook's notice; ``message`` is terminal-safe and names the hook's command."""

    kind: ClassVar[str] = "hook_notice"
    hook_event: str
    """``pre_tool``, ``post_tool``, ``pre_compact``, ``post_compact`` or ``stop``."""
    message: str
    level: Literal["warning", "information"] = "warning"

    def describe(self) -> str:
        """``hook (stop): hook 'notify.sh' did not finish in 10 s: stopped``."""
        return f"hook ({self.hook_event}): {self.message}"
