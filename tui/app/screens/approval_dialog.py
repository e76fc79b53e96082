"""What the approval dialogs share (a file write, a shell command, a project's config): their look, their keys
and their arming.

Each answer has a key and a button. The dialog can open while the user is typing the next prompt, so no key
answers it until :data:`ARMING_DELAY` seconds after it was first drawn: every key that reaches it before (typed
before it opened, or just after) goes to the prompt instead (:attr:`ApprovalDialog.typed_early`), where it was
meant to go. A click always answers (it is never a stray key). What grants the most — every command, every
write, every tool of a server, for the session — takes Ctrl+A, never a letter a sentence is made of. A subclass
declares its :attr:`ApprovalDialog.ANSWER_KEYS`, composes its body and says in :meth:`ApprovalDialog.decide` what
each answer dismisses it with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Button, Input

from tui.app.screens.basic_dialogs import ButtonVariant, DialogScreen, ResultType, action_button

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual import events

__all__ = ["ARMING_DELAY", "REASON", "SESSION_KEY", "AnswerKey", "ApprovalDialog"]

ARMING_DELAY = 0.5
"""Seconds after an approval dialog is first drawn before a key answers it (the keys before go to the prompt)."""

SESSION_KEY = "ctrl+a"
"""The key of the broadest answer (for the whole session): deliberate, never a letter typed in a sentence."""
SESSION_KEY_SHOWN = "^a"

PROMPT_KEYS = frozenset({"enter", "backspace", "delete", "ctrl+j", "escape", "tab", "space"})
"""Keys that edit or send the prompt: before the dialog is armed they are the prompt's, as typed letters are."""

DIALOG_HEIGHT_SHARE = 0.9
"""The share of the screen's rows a dialog may take (``max-height: 90%`` in :class:`DialogScreen`'s CSS)."""

REASON = "reason"
"""The answer that opens the dialog's reason field instead of closing it (Enter there declines with the text)."""


@dataclass(frozen=True)
class AnswerKey:
    """A key binding that answers an approval dialog: ``keys`` as a :class:`~textual.binding.Binding` spells
    them, the ``answer`` they give and what it does. Every key waits for the dialog to arm."""

    keys: str
    answer: str
    description: str


class ApprovalDialog(DialogScreen[ResultType], Generic[ResultType]):
    """A dialog answered once, by a key or a button; dismisses with :meth:`decide`'s result for the answer."""

    ANSWER_KEYS: ClassVar[tuple[AnswerKey, ...]] = ()
    """The dialog's keys; the base turns them into its bindings (with ←/→ moving between the buttons)."""

    DEFAULT_CSS = """
    ApprovalDialog .approval--framed {
        height: auto;
        margin-top: 1;
        border: round $panel;
        padding: 0 1;
    }
    ApprovalDialog .approval--reason {
        display: none;
        margin-top: 1;
    }
    ApprovalDialog.-reason .approval--reason {
        display: block;
    }
    ApprovalDialog .dialog--buttons Button {
        margin-left: 1;
    }
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "ANSWER_KEYS" in cls.__dict__:  # before Textual's own set-up, which merges the bindings
            bindings: list[BindingType] = [
                Binding(key.keys, f"key({key.answer!r})", key.description, show=False) for key in cls.ANSWER_KEYS
            ]
            bindings += [Binding("left", "app.focus_previous", show=False),
                         Binding("right", "app.focus_next", show=False),
                         # as in an empty prompt: quits (the call asked about is then recorded as denied)
                         Binding("ctrl+d", "app.quit", "quit", show=False)]
            cls.BINDINGS = bindings
        super().__init_subclass__(**kwargs)

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        """Whether a key answers yet (see :data:`ARMING_DELAY`)."""
        self.typed_early: Callable[[events.Key], None] | None = None
        """Where a key that reaches the dialog before it is armed goes: the prompt (set by whoever opens it)."""
        self._body_rows: int | None = None
        """The fitted body's own max-height (from its CSS), read when first fitted."""

    FITTED_BODY: ClassVar[str | None] = None
    """The selector of the dialog's scrolling body, if it has one: it gives up rows so that the rest of the
    dialog (the buttons most of all) always fits on the screen, down to 60x20."""

    def on_mount(self) -> None:
        self.call_after_refresh(self._drawn)
        if self.FITTED_BODY is not None:
            self.call_after_refresh(self.fit_body)

    def _drawn(self) -> None:
        """The dialog is on the screen: its keys answer :data:`ARMING_DELAY` seconds from now."""
        self.set_timer(ARMING_DELAY, self._arm)

    def on_key(self, event: events.Key) -> None:
        """Before the dialog is armed, a key that types or answers is the prompt's: handed to :attr:`typed_early`,
        never an answer nor a button press here. Other keys (the app's own: quitting, the palette) go on."""
        if self.armed:
            return
        answers = {key for answer in self.ANSWER_KEYS for key in answer.keys.split(",")}
        if not (event.is_printable or event.key in PROMPT_KEYS or event.key in answers):
            return
        event.stop()
        event.prevent_default()
        if self.typed_early is not None:
            self.typed_early(event)

    def on_resize(self) -> None:
        if self.FITTED_BODY is not None:
            self.fit_body()

    def fit_body(self) -> None:
        """Cap the body at what the screen leaves after everything else in the dialog (its CSS max-height at most)."""
        bodies = self.query(self.FITTED_BODY) if self.FITTED_BODY else None
        if not bodies or not self.size.height:
            return
        body = bodies.first()
        if self._body_rows is None:
            limit = body.styles.max_height
            self._body_rows = int(limit.value) if limit is not None and limit.is_cells else 24
        dialog = body.parent
        if not isinstance(dialog, Widget):
            return
        others = sum(child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
                     for child in dialog.children if child.display and child is not body)
        room = (int(self.size.height * DIALOG_HEIGHT_SHARE) - dialog.styles.gutter.height - others
                - body.styles.margin.top - body.styles.margin.bottom)
        body.styles.max_height = max(3, min(self._body_rows, room))

    def _arm(self) -> None:
        self.armed = True

    def decide(self, answer: str) -> ResultType | None:
        """What ``answer`` dismisses the dialog with; ``None`` when it is not an answer here (it stays open)."""
        raise NotImplementedError

    def decline_with(self, reason: str) -> ResultType:
        """What the reason field's text dismisses the dialog with (dialogs that compose :meth:`reason_field`)."""
        raise NotImplementedError

    def answer_button(self, label: str, answer: str, *, variant: ButtonVariant = "default",
                      id: str | None = None) -> Button:
        """A button that gives ``answer`` when clicked (armed or not: a click is never a stray key)."""
        return action_button(label, f"screen.answer({answer!r})", variant=variant, id=id)

    def reason_field(self, id: str) -> Input:
        """The field the :data:`REASON` answer opens, hidden until then; Enter in it declines with its text."""
        return Input(placeholder="why not? (the model reads it) — Enter denies, Esc denies without it",
                     id=id, classes="approval--reason")

    def action_key(self, answer: str) -> None:
        """A key: answers only once the dialog is armed (see :data:`ARMING_DELAY`)."""
        if self.armed:
            self.action_answer(answer)

    def action_answer(self, answer: str) -> None:
        """:data:`REASON` opens the reason field; any other answer dismisses the dialog when :meth:`decide` takes it."""
        if answer == REASON:
            self.add_class("-reason")
            self.query_one(".approval--reason", Input).focus()
            return
        result = self.decide(answer)
        if result is not None:
            self.dismiss(result)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self.decline_with(event.value))
