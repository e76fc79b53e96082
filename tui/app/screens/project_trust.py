"""The one-time question before a project's own config applies: what it would change (its hooks, what sends
requests elsewhere or stops the asking first), which MCP servers its ``.mcp.json`` would start, which subagents,
skills and commands it ships (``.claude/`` and ``.deep-tui/``), and trust / once / not now.

Keyboard first: ``t`` trusts (and remembers it until the config changes or the trust is revoked), ``o``
applies it just this once, ``n`` or Esc goes on without it; every button does the same on a click. The
dialog opens as the app starts, maybe while the user is already typing, so keys answer only
:data:`~tui.app.screens.approval_dialog.ARMING_DELAY` after it is drawn (the keys before go to the prompt: a
stray ``t`` must not trust a project); clicks always work. Every value comes from the project's file: it is shown as plain
content (never markup), escaped to one line and cut (see :func:`tui.trust.project.shown_value`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.screens.approval_dialog import AnswerKey, ApprovalDialog
from tui.app.screens.basic_dialogs import ButtonRow
from tui.text.terminal_text import visible
from tui.trust.hook_entries import is_hook_key
from tui.trust.project import PendingProject, TrustChoice, TrustState
from tui.trust.setting_changes import NOT_SET, SettingChange

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from tui.trust.project_files import ExtensionEntry
    from tui.trust.server_entries import ServerEntry

__all__ = ["ProjectTrustScreen", "changes_content", "extensions_content", "servers_content"]

WARNING = ("A project's config can send your API key to another server and let the agent write files "
           "without asking. Trust it only if you trust whoever wrote it.")
SERVERS_WARNING = ("Its MCP servers run as you, outside any sandbox, and can be handed any of your environment "
                   "variables.")
EXTENSIONS_WARNING = "Its subagents, skills and commands are instructions the agent would follow."
DEFINITIONS_WARNING = ("A project's subagents, skills and commands are instructions the agent would follow, as if "
                       "they were yours. Trust them only if you trust whoever wrote them.")
LISTED_EXTENSIONS = 8
"""At most this many definitions are listed; the rest are counted ("+N more")."""


def changes_content(changes: tuple[SettingChange, ...], *, heading: str = "") -> Content:
    """One line per changed key: ``key  current → project`` and, for a dangerous one, why (a ``●`` marks what
    changed since the last trust); ``heading`` above them."""
    if not changes:
        return Content("It changes none of your settings.")
    width = max(len(change.key) for change in changes)
    pieces: list[tuple[str, str] | str] = [(heading, "bold"), "\n"] if heading else []
    for number, change in enumerate(changes):
        if number:
            pieces.append("\n")
        pieces.append(("● " if change.since_trust else "  ", "$text-warning"))
        pieces.append((change.key.ljust(width), "bold"))
        if is_hook_key(change.key) and change.current == NOT_SET:  # a new hook: only what it runs
            pieces.append("  ")
        else:
            pieces.append(f"  {change.current}")
            pieces.append((" → ", "$text-muted"))
        pieces.append((change.project, "$text-accent"))
        if change.danger:
            pieces.append((f"  ({change.danger})", "$text-warning"))
    return Content.assemble(*pieces)


def servers_content(servers: tuple[ServerEntry, ...]) -> Content:
    """A heading, then one line per server of ``.mcp.json``: ``name  command args`` or ``name  url`` (``●``: new or
    different since the last trust). Every piece is plain text: the names and commands are the project's."""
    width = max(len(server.name) for server in servers)
    pieces: list[tuple[str, str] | str] = [("MCP servers it would start (from .mcp.json):", "bold")]
    for server in servers:
        pieces.append("\n")
        pieces.append(("● " if server.since_trust else "  ", "$text-warning"))
        pieces.append((server.name.ljust(width), "bold"))
        pieces.append(("  " + server.what, "$text-accent"))
    return Content.assemble(*pieces)


def extensions_content(entries: tuple[ExtensionEntry, ...], notes: tuple[str, ...] = ()) -> Content:
    """A heading, then one line per subagent, skill or command: ``kind  name  path`` (``●``: new or different since
    the last trust, listed first), at most :data:`LISTED_EXTENSIONS` and "+N more"; then what was not read (links). The names
    are the project's: plain text, escaped and cut already."""
    pieces: list[tuple[str, str] | str] = [("Subagents, skills and commands it would load:", "bold")]
    entries = tuple(sorted(entries, key=lambda entry: not entry.since_trust))  # what changed is never cut
    listed = entries[:LISTED_EXTENSIONS]
    width = max((len(entry.label) for entry in listed), default=0)
    for entry in listed:
        pieces.append("\n")
        pieces.append(("● " if entry.since_trust else "  ", "$text-warning"))
        pieces.append((entry.label.ljust(width), "$text-muted"))
        pieces.append(("  " + entry.name, "bold"))
        pieces.append(("  " + entry.where, "$text-accent"))
    if len(entries) > len(listed):
        more = len(entries) - len(listed)
        changed = sum(entry.since_trust for entry in entries[len(listed):])
        pieces.append((f"\n  +{more} more" + (f" ({changed} ● new or changed)" if changed else "")
                       + " — deep-tui trust lists them all", "$text-muted"))
    for note in notes[:3]:
        pieces.append((f"\n  not read: {note}", "$text-muted"))
    if len(notes) > 3:
        pieces.append((f"\n  not read: +{len(notes) - 3} more", "$text-muted"))
    return Content.assemble(*pieces)


class ProjectTrustScreen(ApprovalDialog[TrustChoice]):
    """Asks whether the project config of :class:`PendingProject` applies; dismisses with a :class:`TrustChoice`."""

    DEFAULT_CSS = """
    ProjectTrustScreen .dialog {
        width: 100;
        max-height: 95%;
    }
    ProjectTrustScreen .dialog--buttons {
        dock: bottom;
        margin-top: 0;
        padding-top: 1;
    }
    ProjectTrustScreen #trust-where {
        margin-top: 1;
    }
    ProjectTrustScreen #trust-warning, ProjectTrustScreen #trust-error {
        color: $text-warning;
        margin-top: 1;
    }
    """

    ANSWER_KEYS = (
        AnswerKey("t", "trust", "Trust"),
        AnswerKey("o", "once", "Just this once"),
        AnswerKey("n,escape", "not-now", "Not now"),
    )

    def __init__(self, pending: PendingProject) -> None:
        super().__init__()
        self.pending = pending

    def compose(self) -> ComposeResult:
        pending = self.pending
        # The whole dialog scrolls (↑/↓) when the terminal is short; the buttons stay docked at its bottom.
        with VerticalScroll(classes="dialog", id="trust-dialog") as dialog:
            config = pending.config
            only_definitions = config.layer is None and config.mcp_path is None
            if pending.trustable:
                dialog.border_title = "Trust this project's files?" if only_definitions else "Trust this project's config?"
                dialog.border_subtitle = "t trust · o just this once · n/esc not now"
                intro = ("This folder ships its own subagents, skills or commands, ignored until you trust it:"
                         if only_definitions else "This folder has its own deep-tui config, ignored until you trust it:")
            else:
                dialog.border_title = "This project's config is ignored"
                dialog.border_subtitle = "n/esc go on without it"
                intro = "This folder has its own deep-tui config, which deep-tui cannot use:"
            where = "\n".join([intro, *(visible(str(path)) for path in pending.config.files)])
            if pending.state is TrustState.CHANGED and pending.earlier is not None:
                where += f"\nIt changed since you trusted it on {visible(pending.earlier.trusted_at)} (● new)."
            dangerous = tuple(change for change in pending.changes if change.danger)
            # First and in view at 80x24: what Trust would let through (hooks, redirections, no asking), then the
            # programs .mcp.json would start; the rest below.
            if pending.trustable and dangerous:
                yield Static(changes_content(dangerous, heading="What matters most:"), id="trust-dangerous",
                             classes="approval--framed")
            if pending.trustable and pending.servers:  # a server is a program that runs as the user
                yield Static(servers_content(pending.servers), id="trust-servers", classes="approval--framed")
            yield Static(Content(where), id="trust-where")
            if pending.trustable:
                warning = " ".join([WARNING, *([SERVERS_WARNING] if pending.servers else []),
                                    *([EXTENSIONS_WARNING] if pending.extensions else [])])
                if only_definitions:
                    warning = DEFINITIONS_WARNING
                yield Static(Content(warning), id="trust-warning")
                if pending.extensions:
                    yield Static(extensions_content(pending.extensions, config.extensions.notes),
                                 id="trust-extensions", classes="approval--framed")
                others = tuple(change for change in pending.changes if not change.danger)
                if others or not (pending.servers or dangerous or pending.extensions):
                    yield Static(changes_content(others), id="trust-changes", classes="approval--framed")
            else:
                yield Static(Content(visible(pending.error or "")), id="trust-error")
            if pending.store_error is not None:
                yield Static(Content(visible(pending.store_error)), id="trust-error")
            with ButtonRow(classes="dialog--buttons"):
                label = "Not now (n)" if pending.trustable else "Go on without it (n)"
                yield self.answer_button(label, "not-now", id="trust-not-now")
                if pending.trustable:
                    yield self.answer_button("Just this once (o)", "once", id="trust-once")
                    yield self.answer_button("Trust (t)", "trust", variant="warning", id="trust-trust")

    def on_mount(self) -> None:
        # The dialog takes the keyboard (↑/↓ scroll it when the terminal is short); Tab reaches the buttons.
        # (The base's on_mount, which arms the keys, runs after this one.)
        self.query_one("#trust-dialog").focus()

    def decide(self, answer: str) -> TrustChoice | None:
        """``trust``, ``once`` or ``not-now``; a config that cannot be used can only be left out."""
        choice = TrustChoice(answer)
        if choice is not TrustChoice.NOT_NOW and not self.pending.trustable:
            return None
        return choice
