"""/mcp: every configured MCP server, its status (starting, ready, failed and why, stopped) and its tools.

Everything shown comes from the user's config, a project's ``.mcp.json`` or the server itself (tool names,
descriptions, error text): it is hostile text, shown through :func:`~tui.text.terminal_text.visible` as plain
content, never markup. The list redraws when a server's status changes while it is open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.app.text_display import display_path
from tui.base.paths import user_config_file
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from textual.app import ComposeResult

    from tui.agent.mcp.status import McpServerView

__all__ = ["McpServersScreen", "no_servers_content", "servers_content"]

_STATUS_STYLES = {"starting": "$text-warning", "ready": "$text-success", "failed": "$text-error",
                  "stopped": "$text-muted"}
def no_servers_content(config_file: Path) -> Content:
    """What /mcp says with no server: where to add one (the user's own config file, named in full) and how."""
    return Content.assemble(
        "No MCP servers are configured. To add one, put a table like this in ",
        (visible(display_path(config_file)), "bold"), ":\n\n",
        ('[mcp.servers.files]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-filesystem", "."]',
         "$text-accent"),
        "\n\nThe name after mcp.servers (files here) is yours to choose. command starts a program that speaks "
        'MCP; for a server to reach instead, write url = "https://…". A trusted project can list servers in its '
        ".mcp.json too. Start deep-tui again to use them.",
    )


def servers_content(views: Sequence[McpServerView], config_file: Path | None = None) -> Content:
    """The servers, one block each: name, status (and why it failed), what it is, its tools; with none, how to
    add one to ``config_file`` (the user's config file by default)."""
    if not views:
        return no_servers_content(config_file if config_file is not None else user_config_file())
    blocks: list[Content] = []
    for view in views:
        status = view.status + (f": {view.reason}" if view.reason else "")
        lines = [Content.assemble((visible(view.name), "bold"), "  ",
                                  (visible(status), _STATUS_STYLES.get(view.status, ""))),
                 Content.styled(f"{view.transport} · {visible(view.target)} · from {visible(view.source)}",
                                "$text-muted")]
        if view.tools:
            for tool in view.tools:
                name = visible(tool.exposed_as)
                if tool.exposed_as != tool.name:
                    name += f" (the server's {visible(tool.name)})"
                description = f" — {visible(tool.description)}" if tool.description else ""
                lines.append(Content.assemble("  ", (name, "$accent"), description))
        elif view.status == "ready":
            lines.append(Content("  (no tools)"))
        blocks.append(Content("\n").join(lines))
    return Content("\n\n").join(blocks)


class McpServersScreen(DialogScreen[None]):
    """The /mcp panel; Esc (or Close) closes it. ``views`` gives the servers' current state;
    ``on_change`` subscribes to their status changes (returns the unsubscribe function)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        *(Binding(key, f"scroll('{how}')", show=False) for key, how in (
            ("up", "scroll_up"), ("down", "scroll_down"), ("pageup", "scroll_page_up"), ("pagedown", "scroll_page_down"))),
    ]
    DEFAULT_CSS = """
    McpServersScreen .dialog { width: 90; height: 90%; }
    McpServersScreen #mcp-body { height: 1fr; }
    """

    def __init__(self, views: Callable[[], Sequence[McpServerView]],
                 on_change: Callable[[Callable[[], None]], Callable[[], None]] | None = None) -> None:
        super().__init__()
        self._views = views
        self._on_change = on_change
        self._unsubscribe: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "MCP servers"
            dialog.border_subtitle = "esc close"
            with VerticalScroll(id="mcp-body"):
                yield Static(servers_content(self._views()), id="mcp-servers", classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                yield action_button("Close", "screen.close", variant="primary", id="mcp-close")

    def on_mount(self) -> None:
        if self._on_change is not None:
            def changed() -> None:
                self.app.call_later(self.refresh_servers)

            self._unsubscribe = self._on_change(changed)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def refresh_servers(self) -> None:
        if self.is_attached:
            self.query_one("#mcp-servers", Static).update(servers_content(self._views()))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#mcp-body", VerticalScroll), how)(animate=False)
