"""Small reusable dialogs: a shared dialog frame, confirm, prompt, choice and a text viewer.

Every message given as ``str`` is shown literally (never parsed as markup);
pass a :class:`~textual.content.Content` to style it, e.g.
``Content.from_markup("Delete [b]$title[/]?", title=meta.title)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, Literal, TypeVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

if TYPE_CHECKING:
    from textual import events
    from textual.app import ComposeResult

ResultType = TypeVar("ResultType")
ButtonVariant = Literal["default", "primary", "success", "warning", "error"]

__all__ = [
    "Choice",
    "ChoiceModal",
    "ConfirmModal",
    "DialogScreen",
    "PromptModal",
    "TextViewerModal",
    "action_button",
    "as_content",
]


def as_content(text: str | Content) -> Content:
    """Literal content for a ``str`` (markup is never parsed); ``Content`` passes through."""
    return text if isinstance(text, Content) else Content(text)


def action_button(
    label: str,
    action: str,
    *,
    variant: ButtonVariant = "default",
    id: str | None = None,
    focusable: bool = True,
) -> Button:
    """A compact one-row button that runs ``action`` (e.g. ``"screen.save"``) when clicked.

    ``focusable=False`` keeps keyboard focus where it is (in a filter input,
    say) when the button is clicked; the key binding is the keyboard path.
    """
    button = Button(Content(label), variant=variant, id=id, action=action, compact=True)
    button.can_focus = focusable
    return button


class ButtonRow(Horizontal):
    """A dialog's row of buttons; when they do not fit its width (an 80- or 60-column terminal), they wrap into
    a grid of two columns (one below 40 columns) instead of running off the dialog."""

    DEFAULT_CSS = """
    ButtonRow.-wrapped { layout: grid; grid-size: 2; grid-gutter: 0 1; grid-rows: auto; height: auto; }
    ButtonRow.-wrapped.-single { grid-size: 1; }
    ButtonRow.-wrapped Button { width: 1fr; margin-left: 0; }
    """

    def on_resize(self) -> None:
        self.fit()

    def on_mount(self) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """Wrap when the buttons' natural widths (label, padding, margin) add up to more than the row."""
        width = self.size.width
        if not width:
            return
        needed = sum(Content(str(button.label)).cell_length + 4 for button in self.query(Button) if button.display)
        self.set_class(needed > width, "-wrapped")
        self.set_class(width < 40, "-single")


class DialogScreen(ModalScreen[ResultType], Generic[ResultType]):
    """A centred, bordered dialog on a dimmed background.

    Subclasses compose one container with the ``dialog`` class; the border
    title is the dialog title, ``.dialog--buttons`` is a right-aligned button
    row and ``.dialog--hint`` a muted line of key hints.
    """

    DEFAULT_CSS = """
    DialogScreen {
        align: center middle;
        background: $background 60%;
    }
    DialogScreen .dialog {
        width: 72;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    DialogScreen .dialog--message {
        margin: 1 0;
        width: 1fr;
    }
    DialogScreen .dialog--buttons {
        height: auto;
        width: 1fr;
        align-horizontal: right;
        margin-top: 1;
    }
    DialogScreen .dialog--buttons Button {
        margin-left: 2;
        min-width: 8;
    }
    DialogScreen .dialog--hint {
        color: $text-muted;
        width: 1fr;
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """


class ConfirmModal(DialogScreen[bool]):
    """Ask a yes/no question; dismisses ``True`` on confirm, ``False`` on cancel (Esc, n)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel"),
        Binding("y", "confirm", "Confirm", show=False),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(
        self,
        title: str,
        message: str | Content,
        *,
        confirm_label: str = "OK",
        cancel_label: str = "Cancel",
        destructive: bool = False,
    ) -> None:
        super().__init__()
        self._title = title
        self._message = as_content(message)
        self._confirm_label = confirm_label
        self._cancel_label = cancel_label
        self._destructive = destructive

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._message, classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button(f"{self._cancel_label} (n)", "screen.cancel", id="cancel")
                yield action_button(
                    f"{self._confirm_label} (y)",
                    "screen.confirm",
                    variant="error" if self._destructive else "primary",
                    id="confirm",
                )

    def on_mount(self) -> None:
        # A destructive action never has the default focus: Enter cancels.
        self.query_one("#cancel" if self._destructive else "#confirm", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class QuitQuestion(ConfirmModal):
    """"Quit and lose them?" — asked by Ctrl+Q when something is not saved (``what``); Enter keeps the app, and a
    second Ctrl+Q while it is open quits."""

    def __init__(self, what: str) -> None:
        super().__init__("Quit?", f"{what} Quit and lose them?", confirm_label="Quit anyway", cancel_label="Back",
                         destructive=True)


class PromptModal(DialogScreen[str | None]):
    """Ask for one line of text; dismisses the stripped text, or ``None`` on Esc/Cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        title: str,
        *,
        value: str = "",
        placeholder: str = "",
        message: str | Content | None = None,
        submit_label: str = "OK",
    ) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder
        self._message = as_content(message) if message is not None else None
        self._submit_label = submit_label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self._title
            if self._message is not None:
                yield Static(self._message, classes="dialog--message")
            yield Input(self._value, placeholder=self._placeholder, id="prompt-input", select_on_focus=True)
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Cancel (esc)", "screen.cancel", id="cancel")
                yield action_button(f"{self._submit_label} (⏎)", "screen.submit", variant="primary", id="submit")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_submit(self) -> None:
        self.dismiss(self.query_one(Input).value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class Choice:
    """One answer of a :class:`ChoiceModal`: the value it dismisses with, its label and its key."""

    value: str
    label: str
    key: str
    variant: ButtonVariant = "default"


class ChoiceModal(DialogScreen[str | None]):
    """Ask the user to pick one of several answers; dismisses the chosen ``Choice.value``, or ``None`` on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose(None)", "Cancel"),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(
        self,
        title: str,
        message: str | Content,
        choices: list[Choice],
        *,
        default: str | None = None,
        allow_cancel: bool = True,
    ) -> None:
        super().__init__()
        self._title = title
        self._message = as_content(message)
        self._choices = choices
        self._default = default if default is not None else (choices[0].value if choices else None)
        self._allow_cancel = allow_cancel

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._message, classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                for choice in self._choices:
                    yield action_button(
                        f"{choice.label} ({choice.key})",
                        f"screen.choose({choice.value!r})",
                        variant=choice.variant,
                        id=f"choice-{choice.value}",
                    )

    def on_mount(self) -> None:
        if self._default is not None:
            self.query_one(f"#choice-{self._default}", Button).focus()

    def on_key(self, event: events.Key) -> None:
        """Each choice's key picks it."""
        for choice in self._choices:
            if event.key == choice.key:
                event.stop()
                self.action_choose(choice.value)
                return

    def action_choose(self, value: str | None) -> None:
        if value is None and not self._allow_cancel:
            return
        self.dismiss(value)


class TextViewerModal(DialogScreen[None]):
    """A scrollable, read-only view of some text (a diff, a long error); Esc or q closes it."""

    DEFAULT_CSS = """
    TextViewerModal .dialog {
        width: 90%;
        height: 80%;
    }
    TextViewerModal #viewer-body {
        height: 1fr;
        border: none;
        padding: 0;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, body: str | Content) -> None:
        super().__init__()
        self._title = title
        self._body = as_content(body)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self._title
            with VerticalScroll(id="viewer-body"):
                yield Static(self._body)
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Close (esc)", "screen.close", variant="primary", id="close")

    def on_mount(self) -> None:
        self.query_one("#viewer-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
