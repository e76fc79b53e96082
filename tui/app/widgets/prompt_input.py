"""The prompt: Enter sends, Ctrl+J inserts a newline, Up/Down walk the history, ``/`` completes commands,
``/model `` completes model names and ``@`` completes the workdir's files.

Nothing typed here is lost: an unknown ``/command`` stays in the editor with a note saying which
commands exist, and a prompt sent while a turn runs is queued by the app (the prompt only posts
:class:`PromptInput.Submitted`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import TextArea

from tui.app.command_registry import Command, find, is_pasted_path, parse_slash, unknown_command_message
from tui.app.widgets.suggestions import CommandSuggestions, Suggestion
from tui.store.prompt_history import PromptHistory
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["CommandSuggestions", "PromptInput", "Suggestion"]

MENTION_AT_CURSOR = re.compile(r'(?:^|(?<=\s))@("[^"\n]*|[^\s"]*)$')
"""An ``@`` mention being typed: from the ``@`` (at the start or after a space) to the cursor."""
MODEL_ARGUMENT = re.compile(r"^/model\s+(\S*)$", re.IGNORECASE)



class PromptInput(TextArea):
    """Multi-line prompt editor; posts :class:`PromptInput.Submitted` on Enter."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "send", show=False),
        Binding("ctrl+j", "newline", "new line", show=False),
        Binding("up", "history_previous", "previous prompt", show=False),
        Binding("down", "history_next", "next prompt", show=False),
        Binding("tab", "complete", "complete", show=False),
        Binding("escape", "hide_suggestions", "close list", key_display="esc"),
        Binding("ctrl+d", "quit_if_empty", "quit (empty prompt)", show=False),
        Binding("pageup", "screen.scroll_chat('page_up')", "scroll chat", show=False),
        Binding("pagedown", "screen.scroll_chat('page_down')", "scroll chat", show=False),
        Binding("home", "home", show=False),
        Binding("end", "end", show=False),
    ]

    @dataclass
    class Submitted(Message):
        """The user sent ``text``: a prompt for the model, or ``command`` with its ``argument``."""

        text: str
        command: Command | None = None
        argument: str = ""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, compact=True)
        self.placeholder = "Type a message — Enter sends, Ctrl+J new line, ↑ history, / for commands"
        self.prompt_history = PromptHistory()
        """Set by the app for each session (kept in memory only until a session is open)."""
        self.recall_queued: Callable[[], str | None] | None = None
        """Set by the app: Up in an empty prompt takes the newest queued prompt back for editing."""
        self._browsing: int | None = None
        """Index of the history entry shown, while walking the history."""
        self._draft = ""
        self._suggestions_closed_for: str | None = None
        self.complete_files: Callable[[str], Sequence[str] | None] | None = None
        """Set by the app: the workdir's files matching what follows an ``@`` (None while they are listed)."""
        self.complete_models: Callable[[str], Sequence[tuple[str, str]]] | None = None
        """Set by the app: ``(name, detail)`` of the models matching what follows ``/model ``."""

    def on_key(self, event: events.Key) -> None:
        """Enter sends here, in the editor's own order of keys: the keys typed before it are in the text, the keys
        typed after it are not yet. (Through a binding, Enter ran once the key had bubbled up to the app, after a
        loaded app had inserted the letters behind it: two queued prompts merged into one, issue 29 §15.)"""
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            self.action_submit()
        elif event.key == "ctrl+j":
            # Here, not by the binding: a binding runs once the key has bubbled up to the app, after the letters
            # typed behind it in the same burst were inserted (the newline would land after them).
            event.prevent_default()
            event.stop()
            self.action_newline()

    # -- helpers ----------------------------------------------------------------------------

    @property
    def suggestions(self) -> CommandSuggestions | None:
        """The completion list the app placed next to the prompt (none in a bare test app). Looked up among
        the screen's children only: a query of the whole screen walked every block of the chat at each key."""
        found = self.screen.query_children(CommandSuggestions)
        return found.first() if found else None

    def _show(self, text: str) -> None:
        """Replace the text (history, queue, completion) with the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def use_history(self, history: PromptHistory) -> None:
        """Walk ``history`` from now on (another session's); what is in the editor stays."""
        self.prompt_history = history
        self._browsing = None
        self._draft = ""

    def put_back(self, text: str) -> None:
        """Return ``text`` to the editor for more editing, keeping anything typed meanwhile below it."""
        current = self.text.strip()
        self._show(f"{text}\n{current}" if current else text)
        self.focus()

    def clear_typed(self) -> bool:
        """Ctrl+C on typed text, as in a shell: clear it (kept in the history, so ↑ brings it back). False when
        there was nothing to clear."""
        text = self.text
        if not text.strip():
            return False
        self.prompt_history.add(text.strip())
        self._browsing = None
        self._draft = ""
        self._set_suggestions(False)
        self.clear()
        return True

    # -- sending -----------------------------------------------------------------------------

    def action_submit(self) -> None:
        """Enter: send the prompt (completing a partly typed command or model name first); with a file listed
        after an ``@``, Enter puts that file in the prompt instead."""
        suggestions = self.suggestions
        item = suggestions.chosen_item if suggestions is not None else None
        if item is not None and item.kind == "file":
            self._complete_file(item.value)
            return
        chosen = item.command if item is not None else None
        text = self.text.strip()
        pasted_path = is_pasted_path(text)  # a dragged file's path: a message, never a command
        if chosen is not None and not pasted_path and text.startswith("/") and " " not in text \
                and find(text[1:]) is None:
            text = f"/{chosen.name}"
        if item is not None and item.kind == "model" and MODEL_ARGUMENT.match(text):
            text = f"/model {item.value}"
        if not text:
            return
        self._set_suggestions(False)
        command: Command | None = None
        argument = ""
        if text.startswith("//"):  # an escaped slash: a message that starts with "/"
            prompt = text[1:]
        elif text.startswith("/") and not pasted_path:
            slash = parse_slash(text)
            if slash is None:
                self.notify(unknown_command_message(text), title="Unknown command", severity="warning",
                            timeout=8, markup=False)
                return  # the text stays, to be corrected
            command, argument = slash
            prompt = text
        else:
            prompt = text
        self.prompt_history.add(text)
        self._browsing = None
        self._draft = ""
        self.clear()
        self.post_message(self.Submitted(prompt, command, argument))

    def action_newline(self) -> None:
        self.insert("\n")

    def take_key(self, key: str, character: str | None) -> None:
        """A key typed for the prompt that reached a dialog first (an approval dialog before it was armed): its
        letters and edits land here, as if typed here; Enter does not send (the text stays in the prompt, to be
        sent once the dialog is answered), and keys that neither type nor edit are dropped."""
        actions = {"ctrl+j": self.action_newline, "backspace": self.action_delete_left,
                   "delete": self.action_delete_right}
        if key in actions:
            actions[key]()
        elif character is not None and character.isprintable() and key != "enter":
            self.insert(character)

    # -- history -------------------------------------------------------------------------------

    def _may_walk(self, upward: bool) -> bool:
        """Up/Down walk the history in an empty or one-line prompt, and on the first (last) line of
        a recalled multi-line entry."""
        if self.document.line_count <= 1:
            return True
        row = self.cursor_location[0]
        return self._browsing is not None and row == (0 if upward else self.document.line_count - 1)

    def action_history_previous(self) -> None:
        suggestions = self.suggestions
        if suggestions is not None and suggestions.shown:
            suggestions.action_cursor_up()
            return
        if not self._may_walk(upward=True):
            self.action_cursor_up()
            return
        if self._browsing is None and not self.text and self.recall_queued is not None:
            queued = self.recall_queued()
            if queued is not None:
                self._show(queued)
                return
        entries = self.prompt_history.entries
        if not entries:
            self.action_cursor_up()
            return
        if self._browsing is None:
            self._draft = self.text
            self._browsing = len(entries) - 1
        elif self._browsing > 0:
            self._browsing -= 1
        else:
            return  # the oldest entry: stay
        self._show(entries[self._browsing])

    def action_history_next(self) -> None:
        suggestions = self.suggestions
        if suggestions is not None and suggestions.shown:
            suggestions.action_cursor_down()
            return
        if self._browsing is None or not self._may_walk(upward=False):
            self.action_cursor_down()
            return
        entries = self.prompt_history.entries
        if self._browsing < len(entries) - 1:
            self._browsing += 1
            self._show(entries[self._browsing])
        else:  # past the newest entry: back to what was being typed
            self._browsing = None
            self._show(self._draft)

    # -- completion ------------------------------------------------------------------------------

    @on(TextArea.Changed)
    def _text_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self:
            return
        text = self.text
        entries = self.prompt_history.entries
        if self._browsing is not None and (self._browsing >= len(entries) or text != entries[self._browsing]):
            self._browsing = None  # edited: what is in the editor now is the draft
        suggestions = self.suggestions
        if suggestions is None:
            return
        if self._browsing is not None:  # a recalled entry: Up/Down keep walking the history
            self._set_suggestions(False)
            return
        if text == self._suggestions_closed_for:
            self._set_suggestions(False)
            return
        typing_a_command = (text.startswith("/") and not text.startswith("//") and not any(c.isspace() for c in text)
                            and not is_pasted_path(text))
        if typing_a_command:
            self._set_suggestions(text[1:])
            return
        model = MODEL_ARGUMENT.match(text)
        if model is not None and self.complete_models is not None:
            self._show_items([Suggestion("model", name, Content.assemble((f"{visible(name):<40}", "bold"),
                                                                         (visible(detail), "$text-muted")))
                              for name, detail in self.complete_models(model.group(1))])
            return
        mention = self._mention_at_cursor()
        if mention is not None and self.complete_files is not None:
            files = self.complete_files(mention)
            self._show_items([Suggestion("file", path, Content.assemble(("@", "$accent"), (visible(path), "bold")))
                              for path in files or ()])
            return
        self._set_suggestions(False)

    def refresh_suggestions(self) -> None:
        """Work out the completion list again (the app's file listing just arrived)."""
        self._text_changed(TextArea.Changed(self))

    def _mention_at_cursor(self) -> str | None:
        """What follows the ``@`` being typed at the cursor (without a leading quote), or None."""
        row, column = self.cursor_location
        before = self.document.get_line(row)[:column]
        match = MENTION_AT_CURSOR.search(before)
        return match.group(1).lstrip('"') if match else None

    def _complete_file(self, path: str) -> None:
        """Replace the ``@`` mention at the cursor with ``@path `` (quoted when it holds a space)."""
        row, column = self.cursor_location
        before = self.document.get_line(row)[:column]
        match = MENTION_AT_CURSOR.search(before)
        if match is None:
            return
        mention = f'@"{path}" ' if any(char.isspace() for char in path) else f"@{path} "
        self._set_suggestions(False)
        self.replace(mention, (row, match.start()), (row, column))
        self._suggestions_closed_for = self.text

    def _show_items(self, items: list[Suggestion]) -> None:
        suggestions = self.suggestions
        if suggestions is None:
            return
        was_shown = suggestions.shown
        suggestions.show_items(items)
        if suggestions.shown != was_shown:
            self.refresh_bindings()

    def _set_suggestions(self, typed: str | bool) -> None:
        """Show the command list for ``typed`` (the text after ``/``), or hide the list (``False``)."""
        suggestions = self.suggestions
        if suggestions is None:
            return
        was_shown = suggestions.shown
        if typed is False:
            suggestions.hide()
        else:
            suggestions.show_for(str(typed))
        if suggestions.shown != was_shown:
            self.refresh_bindings()  # Esc and Tab are the list's while it shows, the app's otherwise

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("hide_suggestions", "complete"):
            suggestions = self.suggestions
            return suggestions is not None and suggestions.shown
        return True

    def action_complete(self) -> None:
        """Tab: complete the highlighted command, model name or file; without a list, Tab moves the focus."""
        suggestions = self.suggestions
        item = suggestions.chosen_item if suggestions is not None else None
        if item is None or suggestions is None:
            raise SkipAction()  # Tab goes on to the screen: focus the next widget
        if item.kind == "file":
            self._complete_file(item.value)
            return
        self._set_suggestions(False)
        if item.kind == "model":
            completed = f"/model {item.value}"
        else:
            chosen = item.command
            completed = f"/{item.value}" + (" " if chosen is not None and chosen.argument else "")
        if not MODEL_ARGUMENT.match(completed) or item.kind == "model":
            self._suggestions_closed_for = completed  # "/model " goes on to list the model names
        self._show(completed)

    async def action_quit_if_empty(self) -> None:
        """Ctrl+D: in an empty prompt, quit (as in a shell); otherwise delete the character to the right."""
        if self.text:
            self.action_delete_right()
            return
        await self.app.action_quit()

    def action_hide_suggestions(self) -> None:
        """Esc closes the completion list; without one, Esc goes on to the app (cancel a turn)."""
        suggestions = self.suggestions
        if suggestions is not None and suggestions.shown:
            self._set_suggestions(False)
            self._suggestions_closed_for = self.text
            return
        raise SkipAction()  # Esc goes on to the app: cancel the running turn

    # -- scrolling the chat from the prompt ------------------------------------------------------

    async def action_home(self) -> None:
        """Home: in an empty prompt, the top of the chat; otherwise the start of the line."""
        if self.text:
            self.action_cursor_line_start()
        else:
            await self.run_action("screen.scroll_chat('home')")

    async def action_end(self) -> None:
        """End: in an empty prompt, the bottom of the chat; otherwise the end of the line."""
        if self.text:
            self.action_cursor_line_end()
        else:
            await self.run_action("screen.scroll_chat('end')")
