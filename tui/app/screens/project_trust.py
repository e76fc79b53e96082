"""The one-time question before a project's own config applies: what it would change, which MCP servers its
``.mcp.json`` would start, and trust / once / not now.

Keyboard first: ``t`` trusts (and remembers it until the config changes or the trust is revoked), ``o``
applies it just this once, ``n`` or Esc goes on without it; every button does the same on a click. The
dialog opens as the app starts, maybe while the user is already typing, so keys answer only
:data:`~tui.app.screens.approval_dialog.ARMING_DELAY` after it is drawn (the keys before go to the prompt: a
stray ``t`` must not trust a project); clicks always work. Every value comes from the project's file: it is shown as plain
content (never markup), escaped to one line and cut (see :func:`tui.trust.project.shown_value`).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.app.screens.approval_dialog import AnswerKey, ApprovalDialog
from tui.app.screens.basic_dialogs import ButtonRow
from tui.text.terminal_text import visible
from tui.trust.project import PendingProject, ServerEntry, SettingChange, TrustChoice, TrustState

__all__ = ["ProjectTrustScreen", "changes_content", "servers_content"]

WARNING = ("A project's config can send your API key to another server and let the agent write files "
           "without asking. Trust it only if you trust whoever wrote it.")
SERVERS_WARNING = ("Its MCP servers run as you, outside any sandbox, and can be handed any of your environment "
                   "variables.")


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
            if pending.trustable:
                dialog.border_title = "Trust this project's config?"
                dialog.border_subtitle = "t trust · o just this once · n/esc not now"
                intro = "This folder has its own deep-tui config, ignored until you trust it:"
            else:
                dialog.border_title = "This project's config is ignored"
                dialog.border_subtitle = "n/esc go on without it"
                intro = "This folder has its own deep-tui config, which deep-tui cannot use:"
            where = "\n".join([intro, *(visible(str(path)) for path in pending.config.files)])
            if pending.state is TrustState.CHANGED and pending.earlier is not None:
                where += f"\nIt changed since you trusted it on {visible(pending.earlier.trusted_at)} (● new)."
            dangerous = tuple(change for change in pending.changes if change.danger)
            if pending.trustable and dangerous:  # first and always in view: what Trust would let through
                yield Static(changes_content(dangerous, heading="What matters most:"), id="trust-dangerous",
                             classes="approval--framed")
            yield Static(Content(where), id="trust-where")
            if pending.trustable:
                warning = f"{WARNING} {SERVERS_WARNING}" if pending.servers else WARNING
                yield Static(Content(warning), id="trust-warning")
                if pending.servers:  # a server is a program that runs as the user
                    yield Static(servers_content(pending.servers), id="trust-servers", classes="approval--framed")
                others = tuple(change for change in pending.changes if not change.danger)
                if others or not (pending.servers or dangerous):
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
