"""/agents: the subagent types the ``task`` tool offers — the built-in general-purpose one, the user's
(``~/.config/deep-tui/agents/``) and a trusted project's (``.claude/agents/``, ``.deep-tui/agents/``) — each with
where it comes from, its description, its tools and model; and the definition files that were skipped, and why.

Definitions are files a project may ship: every string is shown through :func:`~tui.text.terminal_text.visible` as
plain content, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.app.text_display import display_path
from tui.base.paths import user_config_dir
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pathlib import Path

    from textual.app import ComposeResult

    from tui.agent.subagents.subagent_definitions import SubagentCatalog, SubagentDefinition

__all__ = ["AgentsScreen", "agents_content"]

GENERAL_PURPOSE_LINE = ("every tool but task, the session's model — used when the model names no type")


def _definition_block(definition: SubagentDefinition) -> Content:
    origin = f"from {definition.origin}"
    if definition.path is not None:
        origin += f" · {visible(display_path(definition.path))}"
    tools = ", ".join(definition.tools) if definition.tools is not None else "every tool but task"
    if definition.unknown_tools:
        tools += f" (unknown, left out: {', '.join(definition.unknown_tools)})"
    lines = [Content.assemble((visible(definition.name), "bold $accent"), "  ", (origin, "$text-muted")),
             Content("  " + " ".join(visible(definition.description).split())),
             Content.styled(f"  tools: {visible(tools)} · model: {visible(definition.model or 'the session’s')}",
                            "$text-muted")]
    return Content("\n").join(lines)


def agents_content(catalog: SubagentCatalog, user_dir: Path | None = None) -> Content:
    """The list /agents shows: general-purpose first, then each definition by name, then the skipped files; with
    no definition, where to put one."""
    folder = (user_dir if user_dir is not None else user_config_dir()) / "agents"
    blocks = [Content.assemble(("general-purpose", "bold $accent"), "  ", ("built in", "$text-muted"), "\n  ",
                               GENERAL_PURPOSE_LINE)]
    blocks.extend(_definition_block(definition) for definition in catalog.listing())
    if not catalog.definitions:
        blocks.append(Content.assemble(
            "No subagent definitions. Put one in ", (visible(display_path(folder)), "bold"),
            " (or, in a trusted project, .claude/agents/ or .deep-tui/agents/) — a Markdown file like:\n\n",
            ("---\nname: reviewer\ndescription: Reviews a diff for bugs; use it after every change.\n"
             "tools: Read, Grep, Glob\n---\nYou review code. Report each bug with file:line.", "$text-accent"),
            "\n\nIt is read when a session opens."))
    if catalog.warnings:
        skipped = [Content.styled("Skipped:", "$text-warning")]
        skipped.extend(Content("  " + visible(line)) for line in catalog.warnings)
        blocks.append(Content("\n").join(skipped))
    return Content("\n\n").join(blocks)


class AgentsScreen(DialogScreen[None]):
    """The /agents panel; Esc (or Close) closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        *(Binding(key, f"scroll('{how}')", show=False) for key, how in (
            ("up", "scroll_up"), ("down", "scroll_down"), ("pageup", "scroll_page_up"), ("pagedown", "scroll_page_down"))),
    ]
    DEFAULT_CSS = """
    AgentsScreen .dialog { width: 90; height: 90%; }
    AgentsScreen #agents-body { height: 1fr; }
    """

    def __init__(self, catalog: SubagentCatalog, user_dir: Path | None = None) -> None:
        super().__init__()
        self._catalog = catalog
        self._user_dir = user_dir

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Subagents"
            dialog.border_subtitle = "esc close"
            with VerticalScroll(id="agents-body"):
                yield Static(agents_content(self._catalog, self._user_dir), id="agents-list",
                             classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Close", "screen.close", variant="primary", id="agents-close")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#agents-body", VerticalScroll), how)(animate=False)
