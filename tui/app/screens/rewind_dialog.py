"""The rewind dialog (``/rewind``, Esc Esc in an empty prompt): the session's restore points, newest first, each
with the files its prompt changed; choosing one shows what the files will become (a diff), asks keep mine / take
the snapshot for each file changed outside deep-tui, and offers the three restores. The dialog only chooses: it
dismisses a :class:`RewindChoice`, and whoever opened it forks and restores (widgets report up)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from tui.agent.rewind.restore import ConflictChoice, RestorePlan, RewindError, RewindMode, RewindPoint
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.text.terminal_text import visible
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic_ai.messages import ModelMessage
    from textual.app import ComposeResult

MAX_DIFF_LINES = 2_000
"""Lines of the preview drawn (the rest is said in one line)."""


class RewindSource(Protocol):
    """What the dialog needs of the session (:class:`~tui.agent.session.runtime.SessionRuntime` has it)."""

    async def rewind_points(self) -> list[RewindPoint]: ...

    async def plan_rewind(self, message: int) -> RestorePlan: ...

    async def rewind_preview(self, plan: RestorePlan, paths: Sequence[str] = ()) -> str: ...

    def load_history(self, start: int, stop: int) -> Sequence[ModelMessage]: ...


@dataclass(frozen=True)
class RewindChoice:
    """What the user chose: which restore, of which prompt, and the answer for each conflicting file."""

    mode: RewindMode
    message: int
    plan: RestorePlan | None
    """``None`` for a conversation-only rewind (no files change)."""
    choices: dict[str, ConflictChoice] = field(default_factory=dict)


def prompt_line(source: RewindSource, point: RewindPoint) -> str:
    """The prompt a restore point comes before, on one line (a ``!command`` or a rewind said as such)."""
    record = point.record
    if record.kind == "command":
        return f"!{record.detail}"
    if record.kind == "restore":
        return f"rewind ({record.detail})"
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.text.message_text import typed_text

    try:
        messages = source.load_history(record.message - 1, record.message)
    except (OSError, ValueError):
        return "(the prompt could not be read)"
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    return " ".join(visible(typed_text(part.content)).split()) or "(empty prompt)"
    return "(no prompt recorded)"


def point_option(source: RewindSource, point: RewindPoint) -> Option:
    """One restore point in the list: its number, time and prompt; below, the files its prompt changed."""
    when = time.strftime("%H:%M", time.localtime(point.record.time)) if point.record.time else ""
    files = ", ".join(visible(item.label()) for item in point.files[:4])
    if len(point.files) > 4:
        files += f" and {len(point.files) - 4} more"
    text = Content.assemble((f"message {point.message}", "bold"), f" · {when} · " if when else " · ",
                            prompt_line(source, point)[:200],
                            "\n  ", (files or "no files changed", "$text-muted"))
    return Option(text, id=f"point-{point.message}")


def diff_content(diff: str) -> Content:
    """A unified diff coloured line by line (already terminal-safe), cut at :data:`MAX_DIFF_LINES`."""
    lines = diff.splitlines()
    parts: list[str | tuple[str, str]] = []
    for line in lines[:MAX_DIFF_LINES]:
        if line.startswith(("+++", "---", "diff ", "index ", "new file", "deleted file")):
            parts.append((line, "bold"))
        elif line.startswith("+"):
            parts.append((line, "$success"))
        elif line.startswith("-"):
            parts.append((line, "$error"))
        elif line.startswith("@@"):
            parts.append((line, "$accent"))
        else:
            parts.append(line)
        parts.append("\n")
    if len(lines) > MAX_DIFF_LINES:
        parts.append((f"… {len(lines) - MAX_DIFF_LINES} more lines", "$text-muted"))
    return Content.assemble(*parts) if parts else Content.styled("(the files are as the restore point has them)",
                                                                   "$text-muted")


class ConflictAnswered(Message):
    """A conflict row got its answer (the code restores become possible when every one has)."""


class ConflictRow(Horizontal):
    """A file changed outside deep-tui: keep mine or take the snapshot (one must be chosen)."""

    DEFAULT_CSS = """
    ConflictRow { height: 1; width: 1fr; }
    ConflictRow .conflict--path { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    ConflictRow Button { margin-left: 1; min-width: 6; }
    ConflictRow Button.-chosen { text-style: bold reverse; }
    """

    def __init__(self, path: str, index: int) -> None:
        super().__init__(id=f"conflict-{index}")
        self.path = path
        self.choice: ConflictChoice | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("⚠ ", "$warning"), visible(self.path)), classes="conflict--path")
        yield Button("keep mine", id="mine", compact=True)
        yield Button("take snapshot", id="snapshot", compact=True)

    @on(Button.Pressed)
    def _choose(self, event: Button.Pressed) -> None:
        event.stop()
        self.choice = "mine" if event.button.id == "mine" else "snapshot"
        for button in self.query(Button):
            button.set_class(button.id == self.choice, "-chosen")
        self.post_message(ConflictAnswered())


class RewindDialog(DialogScreen[RewindChoice | None]):
    """Lists the restore points; a chosen one is planned (its conflicts and diff) before anything is offered."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back / close"),
        Binding("b", "restore('both')", "Code and conversation", show=False),
        Binding("c", "restore('conversation')", "Conversation", show=False),
        Binding("f", "restore('code')", "Code", show=False),
    ]
    DEFAULT_CSS = """
    RewindDialog .dialog { width: 100; }
    RewindDialog #points { height: auto; max-height: 14; border: none; padding: 0; }
    RewindDialog #plan-view { height: auto; display: none; }
    RewindDialog.-planned #plan-view { display: block; }
    RewindDialog.-planned #points { display: none; }
    RewindDialog #summary { height: auto; margin: 0 0 1 0; }
    RewindDialog #conflicts { height: auto; }
    RewindDialog #body { height: auto; }
    RewindDialog #diff-text { height: auto; border: round $panel; }
    RewindDialog .restore { display: none; }
    RewindDialog.-planned .restore { display: block; }
    """

    def __init__(self, source: RewindSource) -> None:
        super().__init__()
        self.source = source
        self.points: list[RewindPoint] = []
        self.plan: RestorePlan | None = None
        self.chosen: RewindPoint | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Rewind"
            with VerticalScroll(id="body"):  # scrolls in a small terminal; the buttons stay in sight below it
                yield Static("Reading the restore points…", id="hint", classes="dialog--message")
                yield OptionList(id="points")
                with Vertical(id="plan-view"):
                    yield Static("", id="summary")
                    yield Vertical(id="conflicts")
                    yield Static("", id="diff-text")
            with ButtonRow(classes="dialog--buttons"):
                for label, mode, variant in (("Code + conversation (b)", "both", "primary"),
                                             ("Conversation (c)", "conversation", "default"),
                                             ("Code (f)", "code", "default")):
                    button = action_button(label, f"screen.restore('{mode}')", variant=variant, id=mode)  # type: ignore[arg-type]
                    button.add_class("restore")
                    yield button
                yield action_button("Back / close (Esc)", "screen.back", id="close")

    def on_resize(self) -> None:
        self._fit_body()

    def _fit_body(self) -> None:
        """The body gets what the screen leaves after the dialog's border and buttons (the dialog is at most 90%
        high): the buttons stay in sight, wrapped in two rows or not."""
        row = self.query_one(ButtonRow)
        row.fit()
        chrome = 3 + (2 if row.has_class("-wrapped") else 1)
        self.query_one("#body").styles.max_height = max(3, int(self.size.height * 0.9) - chrome)

    def on_mount(self) -> None:
        self._load_points()

    @work(exclusive=True, group="rewind-points")
    async def _load_points(self) -> None:
        try:
            self.points = await self.source.rewind_points()
        except (OSError, RewindError) as error:
            self.query_one("#hint", Static).update(Content(f"The restore points could not be read: {error}"))
            return
        hint = self.query_one("#hint", Static)
        options = self.query_one("#points", OptionList)
        if not self.points:
            hint.update(Content("No restore points yet: a prompt gets one when it first changes a file (a write, "
                                "an edit, a command, an MCP tool, a !command)."))
            return
        hint.update(Content(f"{plural(len(self.points), 'restore point')}, newest first. Enter: what going back "
                            "before that prompt would change."))
        options.add_options([point_option(self.source, point) for point in self.points])
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected, "#points")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        number = int(str(event.option.id).removeprefix("point-"))
        self.chosen = next(point for point in self.points if point.message == number)
        self.query_one("#hint", Static).update(Content(f"Planning the rewind to before message {number}…"))
        self._plan(number)

    @work(exclusive=True, group="rewind-plan")
    async def _plan(self, number: int) -> None:
        try:
            plan = await self.source.plan_rewind(number)
        except RewindError as error:
            self.query_one("#hint", Static).update(Content(str(error)))
            return
        diff = await self.source.rewind_preview(plan)
        self.plan = plan
        await self._show_plan(plan, diff)

    async def _show_plan(self, plan: RestorePlan, diff: str) -> None:
        number = plan.point.message
        self.query_one("#hint", Static).update(Content.assemble(
            ("Before message ", "bold"), (str(number), "bold"), ": ",
            prompt_line(self.source, self.chosen) if self.chosen else ""))
        files = ", ".join(visible(item.label()) for item in plan.files[:6])
        more = f" and {len(plan.files) - 6} more" if len(plan.files) > 6 else ""
        summary = (f"Restoring the code changes {plural(len(plan.changes), 'file')}: {files}{more}."
                   if plan.changes else "The files are already as they were before it.")
        if plan.conflicts:
            summary += (f" {plural(len(plan.conflicts), 'file')} changed outside deep-tui since then: choose for "
                        "each before restoring the code.")
        self.query_one("#summary", Static).update(Content(summary))
        conflicts = self.query_one("#conflicts", Vertical)
        await conflicts.remove_children()
        await conflicts.mount_all([ConflictRow(path, index) for index, path in enumerate(plan.conflicts)])
        self.query_one("#diff-text", Static).update(diff_content(diff))
        self.add_class("-planned")
        self.call_after_refresh(self._fit_body)  # the restores are shown now: wrap if need be
        self._update_buttons()
        self.query_one("#both" if not plan.conflicts else "#conversation", Button).focus()

    @on(ConflictAnswered)
    def _update_buttons(self) -> None:
        unanswered = any(row.choice is None for row in self.query(ConflictRow))
        for mode in ("both", "code"):
            self.query_one(f"#{mode}", Button).disabled = unanswered

    def choices(self) -> dict[str, ConflictChoice]:
        """Each conflicting file's answer so far."""
        return {row.path: row.choice for row in self.query(ConflictRow) if row.choice is not None}

    def action_restore(self, mode: RewindMode) -> None:
        plan = self.plan
        if plan is None or not self.has_class("-planned"):
            return
        if mode != "conversation" and self.query_one(f"#{mode}", Button).disabled:
            self.notify("Choose keep mine or take snapshot for each file changed outside deep-tui first.",
                        severity="warning")
            return
        self.dismiss(RewindChoice(mode, plan.point.message, None if mode == "conversation" else plan,
                                  self.choices()))

    def action_back(self) -> None:
        if self.has_class("-planned"):
            self.remove_class("-planned")
            self.call_after_refresh(self._fit_body)
            self.plan = None
            self.query_one("#hint", Static).update(Content("Choose a prompt to go back to (newest first)."))
            self.query_one("#points", OptionList).focus()
            return
        self.dismiss(None)
