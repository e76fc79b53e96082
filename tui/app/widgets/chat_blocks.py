"""The blocks of the chat pane: user prompts, streamed answers, tool calls, compaction dividers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Collapsible, Static

from tui.app.formatting import human_tokens
from tui.text.attachment_text import attached_line
from tui.text.tool_call_text import path_argument

if TYPE_CHECKING:
    from textual import events
    from textual.widget import Widget

    from tui.app.widgets.command_output import CommandOutputView
from tui.text.terminal_text import visible
from tui.text.user_command_text import shown_output
from tui.text.wording import clip_words, plural

PREVIEW_LIMIT = 4_000
CUT_SHORT_MARK = "⋯ cancelled"
"""Under an answer, or in a thinking block's title, that was stopped before the model finished it (its response
was recorded ``state: "interrupted"``: Esc, quitting mid-turn, a crash)."""
FORK_BINDING = Binding("ctrl+f", "fork_here", "fork here", key_display="^f")
"""On a selected chat message: fork there (after a confirmation). Not a letter: letters typed while a
message is selected go to the prompt (the app forwards them), so typing can never fork by accident."""


@dataclass
class ForkAt(Message):
    """Fork the session keeping messages ``[0:upto]`` (the selected message and everything before it)."""

    upto: int


LONG_PROMPT_LINES = 12
"""A prompt longer than this (a paste, mostly) shows its first :data:`PROMPT_PREVIEW_LINES` lines in the chat."""
PROMPT_PREVIEW_LINES = 3


def prompt_preview(text: str) -> tuple[str, int]:
    """What a collapsed prompt shows, and how many of its lines are hidden (0: it is shown whole)."""
    lines = text.split("\n")
    if len(lines) <= LONG_PROMPT_LINES:
        return text, 0
    return "\n".join(lines[:PROMPT_PREVIEW_LINES]), len(lines) - PROMPT_PREVIEW_LINES


class UserBlock(Static, can_focus=True):
    """A prompt, shown literally (never parsed as markup); select it and press Ctrl+F to fork there.

    A long prompt (a pasted file or log) shows its first lines and a line saying how many more there are;
    Enter on the selected block, or a click on that line, shows them all (and hides them again). What was
    sent and recorded is always the whole text."""

    BINDINGS: ClassVar[list[BindingType]] = [FORK_BINDING,
                                             Binding("enter", "toggle_lines", "show all lines", show=False)]

    def __init__(self, text: str, *, message_index: int | None = None) -> None:
        self.text = visible(text)
        self.expanded = False
        self.restore_point = False
        """The files as they were before this prompt are kept (``/rewind``): shown as ↺ after "you"."""
        super().__init__(self._content(), classes="user-block")
        self.message_index = message_index

    def mark_restore_point(self) -> None:
        """Show that this prompt has a restore point."""
        if not self.restore_point:
            self.restore_point = True
            self.tooltip = "A restore point: /rewind (or Esc Esc in an empty prompt) takes back what this prompt changed"
            self.update(self._content())

    @property
    def hidden_lines(self) -> int:
        """Lines of the prompt not shown now (0 when it is shown whole)."""
        return 0 if self.expanded else prompt_preview(self.text)[1]

    def _content(self) -> Content:
        shown, hidden = prompt_preview(self.text)
        label = ("you↺ " if self.restore_point else "you  ", "bold $accent")
        if not hidden:
            return Content.assemble(label, self.text)
        total = hidden + PROMPT_PREVIEW_LINES
        if self.expanded:
            return Content.assemble(label, self.text, "\n", (f"▲ {total} lines — hide {hidden} of them", "$text-muted"))
        return Content.assemble(label, shown, "\n", (f"▼ [{total} lines — {hidden} more: Enter or click shows them]",
                                                      "$text-muted italic"))

    def action_toggle_lines(self) -> None:
        """Show a long prompt whole, or its first lines again."""
        if prompt_preview(self.text)[1]:
            self.expanded = not self.expanded
            self.update(self._content())

    def on_click(self, event: events.Click) -> None:
        if prompt_preview(self.text)[1] and event.y >= self.size.height - 1:  # the "N more lines" line
            self.action_toggle_lines()

    def action_fork_here(self) -> None:
        if self.message_index is None:
            self.notify("This message is not saved yet (its turn is still running): fork at it once the turn ends.",
                        severity="warning", markup=False)
            return
        self.post_message(ForkAt(self.message_index + 1))


def cut_short_mark() -> Static:
    """The line under an answer that was cut short (:data:`CUT_SHORT_MARK`)."""
    return Static(Content(CUT_SHORT_MARK), classes="cut-short")


class NoticeBlock(Static):
    """A line from deep-tui itself (errors, cancellations, switches)."""

    def __init__(self, text: str, *, tone: str = "muted", classes: str = "") -> None:
        super().__init__(Content(visible(text)), classes=f"notice-block -{tone} {classes}".strip())


def _one_line(text: str) -> str:
    return " ".join(visible(text).split())  # decoded JSON may hold control characters again (\u001b)


def args_summary(args_json: str) -> str:
    """The arguments on one line (a title must not wrap because an argument holds newlines)."""
    try:
        args = json.loads(args_json) if args_json else {}
    except ValueError:
        return clip_words(_one_line(args_json), 80)
    if isinstance(args, dict):
        parts = [f"{key}={clip_words(_one_line(str(value)), 40)}" for key, value in args.items()]
        return clip_words(", ".join(parts), 100)
    return clip_words(_one_line(str(args)), 80)


class ToolBlock(Collapsible):
    """A tool call, collapsed: name and arguments; expanded: arguments and the result preview."""

    message_index: int | None = None
    """The recorded message holding the call (set for history; ``ChatView.reveal_message`` uses it)."""

    @dataclass
    class OpenSaved(Message):
        """The user asked to see an evicted output."""

        path: Path
        source_path: str | None = None
        """The file the call read (its path argument), which names the output's language."""

    def __init__(self, call_id: str, tool_name: str, args_json: str, *, call_title: str | None = None) -> None:
        """``call_title``: the title instead of ``tool_name(arguments)`` (a ``!command``: the command line)."""
        self.call_id = call_id
        self.tool_name = tool_name
        self._args = Static(Content(args_json[:PREVIEW_LIMIT] or "{}"), classes="tool-args")
        self._args.display = bool(args_json)
        self._result = Static(Content("running…"), classes="tool-result")
        self._saved = Button("open saved output", classes="tool-saved", compact=True)
        self._saved.display = False
        self.saved_path: Path | None = None
        self.output_view: CommandOutputView | None = None
        """A running command's output, once some arrived."""
        self._call_title = (clip_words(_one_line(call_title), 100) if call_title
                            else f"{tool_name}({args_summary(args_json)})")
        self._source_path = path_argument(args_json)
        super().__init__(self._args, self._result, self._saved, classes="tool-block")
        # Content, not str: Collapsible parses a str title as markup, and arguments are model text.
        self.title = Content(self._call_title)  # type: ignore[assignment]

    def stream_output(self, pieces: list[str]) -> None:
        """Append a running command's output (shown as it arrives, the block open)."""
        from tui.app.widgets.command_output import CommandOutputView

        if self.output_view is None:
            self.output_view = CommandOutputView()
            self.query_one(Collapsible.Contents).mount(self.output_view, before=self._result)
            self.collapsed = False
        self.output_view.feed(pieces)

    def show_status(self, status: str) -> None:
        """How a running command ended (``[exit status 0 · 1.2 s]``), shown in place of "running…" while its result
        goes through the chain (a large output is saved to disk first); :meth:`set_result` follows."""
        self._result.update(Content(status[:PREVIEW_LIMIT]))

    def set_result(self, preview: str, size_chars: int, *, evicted_path: str | None, is_error: bool,
                   saved_chars: int | None = None, last_line: str = "") -> None:
        """``size_chars``: what the model was given; ``saved_chars``: the whole output saved with ``evicted_path``
        (``None``: not recorded, an older session); ``last_line``: the result's last line — for a command whose
        output is on screen, it is all that is added (how it ended)."""
        if self.output_view is not None:
            preview = last_line or preview.rstrip("\n").rsplit("\n", 1)[-1]
        self._result.update(Content(preview[:PREVIEW_LIMIT]))
        size = f"{size_chars:,} chars"
        if evicted_path:
            self.saved_path = Path(evicted_path)
            self._saved.display = True
            shown = f"{size_chars:,} of {saved_chars:,} chars shown" if saved_chars is not None else f"{size} shown"
            self.title = Content(f"{self._call_title}  ·  {shown}, all saved to disk")  # type: ignore[assignment]
            self.add_class("-evicted")
        else:
            self.title = Content(f"{self._call_title}  ·  {size}")  # type: ignore[assignment]
        self.set_class(is_error, "-error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button is self._saved and self.saved_path is not None:
            event.stop()
            self.post_message(self.OpenSaved(self.saved_path, self._source_path))


def prompt_blocks(typed: str, attached: list[str], message_index: int | None) -> list[Static]:
    """A recorded prompt drawn again as it was live: what the user typed, and a line naming the files attached
    with ``@path`` (``attached: src/app.py (6 bytes)``), never their content."""
    blocks: list[Static] = [UserBlock(visible(typed), message_index=message_index)]
    if attached:
        blocks.append(NoticeBlock(attached_line(attached)))
    return blocks


def user_command_blocks(command: str, context: str, status: str, saved_path: str | None,
                        message_index: int | None, size_chars: int | None = None) -> list[Static | Collapsible]:
    """A recorded ``!command`` drawn again: the line the user typed and its output's block, as when it ran
    (``size_chars``: the whole output's size as counted live, see :func:`output_chars`)."""
    command = visible(command)
    block = ToolBlock(f"user-command-{message_index}", "!", "", call_title=f"! {command}")
    block.message_index = message_index
    raw_output = shown_output(context, status)
    output = visible(raw_output)
    block.set_result(f"{output}\n{visible(status)}" if output else visible(status),
                     len(raw_output) if size_chars is None else size_chars,
                     evicted_path=visible(saved_path) if saved_path else None, is_error=False)
    return [UserBlock(f"!{command}", message_index=message_index), block]


@dataclass(frozen=True)
class DividerInfo:
    """What one compaction replaced, for the divider's title and its expansion."""

    strategy: str
    replaced: int
    tokens_before: int | None
    tokens_after: int | None
    retention: float | None
    focus: str | None
    summary: str
    replaced_range: tuple[int, int] | None
    missing_count: int = 0
    """Identifiers of the summarized messages the summary lacks, counted when its retention stayed low
    (below ``RETENTION_TARGET`` after the second pass); 0 otherwise."""
    missing: tuple[str, ...] = ()
    """The first of them (the event lists at most 20), for the expanded divider."""

    def title(self) -> str:
        verb = "summarized" if self.strategy == "summary" else "dropped (to fit the window)"
        parts = [f"{verb} {plural(self.replaced, 'message')}"]
        if self.tokens_before is not None and self.tokens_after is not None:
            parts.append(f"{human_tokens(self.tokens_before)} → {human_tokens(self.tokens_after)} tokens")
        if self.retention is not None:
            low = f" ⚠ {plural(self.missing_count, 'identifier')} missing" if self.missing_count else ""
            parts.append(f"retention {self.retention:.2f}{low}")
        if self.focus:
            parts.append(f"focus: {self.focus}")
        return ", ".join(parts)


def missing_line(info: DividerInfo) -> Content:
    """What the summary lacks: ``7 identifiers of the summarized messages are not in this summary: `a`, `b` …
    (still in the history: search finds them)``."""
    listed = ", ".join(visible(identifier) for identifier in info.missing)
    more = info.missing_count - len(info.missing)
    if listed and more > 0:
        listed += f" and {more:,} more"
    return Content.assemble(
        (f"⚠ {plural(info.missing_count, 'identifier')} of the summarized messages "
         f"{'is' if info.missing_count == 1 else 'are'} not in this summary", "bold $warning"),
        f": {listed}" if listed else "",
        ("\n(the originals are kept: show the replaced messages below, or search the history)", "$text-muted"),
    )


class CompactionDivider(Collapsible):
    """A compaction in the transcript; expands to the summary and, on request, the replaced messages.

    Everything in it is as tall as its text (no nested scroll box): the mouse wheel always scrolls the chat.
    """

    DEFAULT_CSS = """
    CompactionDivider .divider-originals { height: auto; }
    """

    message_index: int | None = None
    """The recorded summary message (set for history; ``ChatView.reveal_message`` uses it)."""

    @dataclass
    class ShowOriginals(Message):
        divider: CompactionDivider
        start: int
        end: int  # (not ``stop``: that is Message.stop(), which ends the message's bubbling)

    SHOW = "show the replaced messages"
    HIDE = "hide the replaced messages"

    def __init__(self, info: DividerInfo) -> None:
        self.info = info
        self._originals = Vertical(classes="divider-originals")
        button = Button(self.SHOW, classes="divider-show", compact=True)
        button.display = info.replaced_range is not None
        details: list[Widget] = [Static(missing_line(info), classes="divider-missing")] if info.missing_count else []
        super().__init__(*details, Static(Content(visible(info.summary)), classes="divider-summary"), button,
                         self._originals, classes=f"compaction-divider{' -low-retention' if info.missing_count else ''}")
        self.title = Content(visible(f"── {info.title()} ──"))  # type: ignore[assignment]  # a focus is user text
        self._button = button
        self._loaded = False

    @property
    def originals_shown(self) -> bool:
        """The replaced messages are on screen under the summary."""
        return self._loaded and bool(self._originals.display)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button is self._button and self.info.replaced_range is not None:
            event.stop()
            self.toggle_originals()

    def toggle_originals(self) -> None:
        """Show the replaced messages (loaded once, on the first request), or hide them again."""
        if self.info.replaced_range is None:
            return
        if self.originals_shown:
            self._originals.display = False
            self._button.label = self.SHOW
        elif self._loaded:
            self._originals.display = True
            self._button.label = self.HIDE
        else:
            self.post_message(self.ShowOriginals(self, *self.info.replaced_range))

    async def show_originals(self, lines: list[tuple[str, str]]) -> None:
        if not self._loaded:
            self._loaded = True
            await self._originals.mount_all(
                Static(Content.assemble((f"{label}  ", "bold $text-muted"), visible(text)), classes="original-line")
                for label, text in lines
            )
        self._originals.display = True
        self._button.label = self.HIDE
