"""``/model``: switch the session's model (by name, or from the chooser), with one notice saying what changed.

Nothing here loads pydantic-ai before ``/model`` is used (the first frame never waits for it). The switch
itself is the runtime's (the model built in a thread, since a provider's client imports its SDK; window and
prices resolved again, session.json updated, the usage reported at once against the new window). An unknown
model or a missing key is one notification and the old model stays.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from tui.app.formatting import human_tokens
from tui.app.opening import SessionNotReady
from tui.chain.events import UsageEvent, describe_window_source

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from tui.agent.models.catalogue import ModelEntry
    from tui.agent.runtime_api import ModelSwitch
    from tui.app.chat.session_state import SessionState

__all__ = ["ModelHost", "ModelSwitching", "describe_switch"]

logger = logging.getLogger(__name__)

RECENT_LIMIT = 6
COMPLETION_LIMIT = 40


def describe_switch(switch: ModelSwitch) -> str:
    """``Model: openai:gpt-5 (was offline) — 400k tokens, window from genai-prices.`` plus a compaction note;
    choosing the model already in use says so instead of "(was offline)" after "offline"."""
    was = f" (was {switch.previous})" if switch.previous != switch.name else " (unchanged)"
    said = (f"Model: {switch.name}{was} — {human_tokens(switch.window)} tokens, "
            f"{describe_window_source(switch.window_source)}.")
    if switch.over_window:
        said += " The context is past the new window's compaction threshold: it is compacted before the next request."
    return said


class ModelHost(Protocol):
    """What ``/model`` needs from the screen that owns the chat."""

    state: SessionState

    @property
    def ready(self) -> bool:
        """The session is open (else the user is told it is still opening)."""

    def refresh_title(self) -> None: ...

    def show_usage(self, usage: UsageEvent | None) -> None:
        """The gauge shows ``usage``."""

    def show_dialog(self, screen: Screen[Any], done: Callable[[Any], None]) -> None: ...

    def start(self, work: Awaitable[None], group: str) -> None:
        """Run ``work`` as the one worker of ``group``."""

    def tell(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
             timeout: float | None = None) -> None:
        """A notification (plain text)."""


class ModelSwitching:
    """The chat's side of ``/model``: the chooser, the switch, the models used in this run."""

    def __init__(self, host: ModelHost) -> None:
        self.host = host
        self.used: list[str] = []
        """Models switched to in this run, newest first."""

    def entries(self) -> list[ModelEntry]:
        """What the chooser and the completion after ``/model`` offer (pydantic-ai is loaded by now: the app
        imports the model modules only when ``/model`` is used, never for its first frame)."""
        from tui.agent.models.catalogue import catalogue

        return catalogue(self.host.state.runtime.info.model_name, self.recent(),
                         current_window=self.host.state.runtime.context_window)

    def completions(self, typed: str) -> list[tuple[str, str]]:
        """``(name, window and note)`` of the models matching ``typed``, for the completion after ``/model ``."""
        from tui.app.screens.model_chooser import matching

        return [(entry.name, f"{entry.window_text:>6}  {entry.note}")
                for entry in matching(self.entries(), typed)[:COMPLETION_LIMIT]]

    def recent(self) -> list[str]:
        """Models used lately: switched to in this run, then those of the newest sessions."""
        names = list(self.used)
        for meta in self.host.state.recent_sessions or ():
            if meta.model and meta.model not in names:
                names.append(meta.model)
        return names[:RECENT_LIMIT]

    def open(self, name: str = "") -> None:
        """``/model NAME`` switches; ``/model`` opens the chooser."""
        if not self.host.ready:
            return
        if name.strip():
            self.host.start(self.switch(name.strip()), "model")
            return
        from tui.app.screens.model_chooser import ModelChooser

        def chosen(picked: str | None) -> None:
            if picked:
                self.host.start(self.switch(picked), "model")

        self.host.show_dialog(ModelChooser(self.entries(), self.host.state.runtime.info.model_name), chosen)

    async def switch(self, name: str) -> None:
        from tui.agent.models.choice import ModelConfigError

        runtime = self.host.state.runtime
        if runtime.busy:
            self.host.tell("A turn is running; switch the model when it has finished.", title="Model not changed",
                           severity="warning")
            return
        try:
            switch = await runtime.switch_model(name)
        except (ModelConfigError, SessionNotReady) as error:
            self.host.tell(str(error), title="Model not changed", severity="error", timeout=8)
            return
        logger.info("session %s: model %s → %s", runtime.info.session_id, switch.previous, switch.name)
        if switch.name in self.used:
            self.used.remove(switch.name)
        self.used.insert(0, switch.name)
        factory = self.host.state.factory
        if factory is not None:
            factory.use_model(switch.name)
        self.host.refresh_title()
        self.host.show_usage(runtime.last_usage)
        self.host.tell(describe_switch(switch), timeout=8)
