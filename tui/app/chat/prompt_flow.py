"""What happens to a submitted prompt: a command runs, a prompt is sent — or queued, never dropped.

A prompt sent while a turn is streaming (or while the session is still opening) waits in the
:class:`~tui.app.widgets.prompt_queue.PromptQueue`; the oldest is sent when the turn ends. A turn
the user cancelled (Esc) does not send the queue: the queued text goes back into the prompt, to be
edited or sent again. Each session has its own prompt history (:mod:`tui.store.prompt_history`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from textual.widgets import Input, TextArea

from tui.store.prompt_history import PromptHistory, history_path

if TYPE_CHECKING:
    from textual import events
    from textual.widget import Widget

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.app.chat.session_state import SessionState
    from tui.app.widgets.prompt_input import PromptInput
    from tui.app.widgets.prompt_queue import PromptQueue

__all__ = ["PromptFlow", "PromptHost", "history_for"]

logger = logging.getLogger(__name__)


def history_for(runtime: SessionRuntimeAPI) -> PromptHistory:
    """The prompt history of ``runtime``'s session (a fork starts from its parent's); in memory only
    while the session is still opening."""
    info = runtime.info
    if not info.session_id:
        return PromptHistory()
    parent = history_path(runtime.data_root, info.parent) if info.parent else None
    return PromptHistory.load(history_path(runtime.data_root, info.session_id), inherit_from=parent)


class PromptHost(Protocol):
    """What the prompt flow needs from the screen that owns the chat."""

    state: SessionState

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def queue(self) -> PromptQueue: ...

    def run_turn(self, prompt: str) -> object:
        """Start a turn with ``prompt`` (in the background)."""

    def run_user_command(self, command: str) -> object:
        """Start the user's ``!command`` (in the background)."""

    def dismiss_welcome(self) -> None: ...

    async def run_command(self, action: str) -> None:
        """Carry out a registry command's action (``"compact('focus')"``)."""

    def say(self, message: str, timeout: float) -> None:
        """A notification (plain text)."""


class PromptFlow:
    """The chat's side of the prompt: commands, sending, the queue, and the per-session history."""

    def __init__(self, host: PromptHost) -> None:
        self.host = host

    @property
    def prompt(self) -> PromptInput:
        return self.host.prompt

    @property
    def queue(self) -> PromptQueue:
        return self.host.queue

    def _can_send(self) -> bool:
        return self.host.state.factory is not None and not self.host.state.runtime.busy

    async def submitted(self, message: PromptInput.Submitted) -> None:
        """Run a command, send a prompt, or queue it while a turn runs or the session opens."""
        if message.command is not None and message.command.custom is not None:  # the user's or project's file
            self.send(message.command.custom.expand(message.argument))
            return
        if message.command is not None:
            if message.command.argument and message.argument:  # "/compact keep the API", "/model NAME"
                await self.host.run_command(f"{message.command.action}({message.argument!r})")
            else:
                await self.host.run_command(message.command.action)
            return
        self.host.dismiss_welcome()
        if message.text.startswith("!") and message.text[1:].strip():
            self._user_command(message.text)
            return
        self.send(message.text)

    def send(self, text: str) -> None:
        """Send ``text`` as a prompt now, or queue it while a turn runs or the session opens."""
        self.host.dismiss_welcome()
        if self._can_send() and not len(self.queue):
            self.host.run_turn(text)
            return
        self.queue.add(text)
        if self.host.state.factory is None:
            self.host.say("The session is still opening; your message is queued and will be sent as soon as "
                          "it is open.", timeout=4)
        self.send_next()  # idle with older prompts waiting (a turn that ended in an error): oldest first

    def _user_command(self, text: str) -> None:
        """``!command``: runs now (the user typed it: no approval); while a turn runs it goes back to the prompt."""
        if self._can_send():
            self.host.run_user_command(text[1:].strip())
            return
        self.prompt.put_back(text)
        self.host.say("A turn is running: run the command when it ends (Esc stops the turn).", timeout=4)

    def turn_ended(self, *, cancelled: bool) -> None:
        """After a turn: send the next queued prompt — unless the user cancelled the turn."""
        if cancelled and len(self.queue):
            texts = self.queue.take_all()
            self.prompt.put_back("\n\n".join(texts))
            self.host.say("The turn was cancelled, so your queued message was not sent: it is back in the "
                          "prompt.", timeout=6)
            return
        self.send_next()

    def send_next(self) -> None:
        """Send the oldest queued prompt, if a turn can start now."""
        if not self._can_send():
            return
        text = self.queue.pop_oldest()
        if text is not None:
            logger.debug("sending a queued prompt (%d characters)", len(text))
            self.host.run_turn(text)

    def recall_newest(self) -> str | None:
        """Up in an empty prompt: the newest queued prompt leaves the queue, back into the editor."""
        return self.queue.pop_newest()

    def take_typing(self, key: events.Key, focused: Widget | None) -> bool:
        """Put a printable ``key`` that reached the app into the prompt when it was typed on a chat message
        or the compact button (selected by a click, e.g. to copy it: the next word typed must neither be lost
        nor act on the message), or in a side panel that takes no text (the tab row, the Todos, Log or Evicted
        panel just opened: the next prompt typed must not vanish). Returns True when the key was taken."""
        if not key.is_printable or not key.character:
            return False
        prompt = self.prompt
        if focused is not prompt:
            if focused is None or isinstance(focused, (TextArea, Input)):
                return False
            if not any(node.id in ("chat", "status", "side") for node in focused.ancestors_with_self):
                return False
            prompt.screen.set_focus(prompt)  # now, not later: the keys queued behind this one follow it
        # else: the prompt inserts what is typed into it and stops it there, so a character reaching the app
        # with the prompt focused was typed on a message just before the prompt took the keyboard (a fast
        # typist's keys are all delivered to the message first): it belongs in the prompt too, in order.
        prompt.insert(key.character)
        return True

    def edit(self, text: str) -> None:
        """*edit* on a queued prompt: it is in the editor now (and no longer queued)."""
        self.prompt.put_back(text)

    def use_session(self, runtime: SessionRuntimeAPI) -> None:
        """Switch the prompt history to ``runtime``'s session (entries typed while it opened are kept)."""
        previous = self.prompt.prompt_history
        history = history_for(runtime)
        if previous.path is None:
            for entry in previous.entries:
                history.add(entry)
        self.prompt.use_history(history)
