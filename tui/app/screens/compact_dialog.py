"""The compact dialog: an optional focus, Run, progress, then tokens before → after (and what the summary
cost) or the failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, LoadingIndicator, Static

from tui.app.formatting import human_tokens
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen
from tui.chain.events import CompactionFailed, CompactionFinished
from tui.text.cost_text import compaction_cost_text
from tui.text.wording import plural

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.chain.summary_plan import SummaryPlan

CompactResult = CompactionFinished | CompactionFailed


def describe_result(event: CompactResult) -> Content:
    if isinstance(event, CompactionFailed):
        return Content.assemble(("Compaction failed: ", "bold $error"), event.reason,
                                ("\nThe history was left exactly as it was.", "$text-muted"))
    retention = f", retention {event.retention_score:.2f}" if event.retention_score is not None else ""
    cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests,
                                saves_per_request=event.saves_usd_per_request, saved_tokens=event.tokens_saved)
    return Content.assemble(
        ("Compacted ", "bold $success"),
        f"{event.strategy}: {human_tokens(event.tokens_before)} → {human_tokens(event.tokens_after)} tokens "
        f"({plural(event.messages_replaced, 'message')} replaced{retention})",
        (f"\n{cost}" if cost else "", "$text-muted"),
        *low_retention_warning(event),
    )


def low_retention_warning(event: CompactionFinished) -> list[tuple[str, str] | str]:
    """When the summary kept few of its span's identifiers even after the second pass: how many it lacks and
    where they still are (the divider's details list them)."""
    if not event.low_retention:
        return []
    return [(f"\n⚠ Low retention: {plural(event.missing, 'identifier')} of the summarized messages "
             f"{'is' if event.missing == 1 else 'are'} not in the summary", "bold $warning"),
            (" (a second pass asked for them). The originals are kept; the divider lists them.", "$text-muted")]


def describe_plan(plan: SummaryPlan) -> Content:
    """What Run will do, said before it runs."""
    if not plan.possible:
        return Content.styled(
            "Nothing to summarize yet: every message is in the recent part that is kept verbatim. Old tool "
            "outputs can still be replaced by pointers to saved copies.", "$text-muted")
    earlier = " together with the earlier summary" if plan.has_earlier_summary else ""
    return Content.assemble(
        "Will summarize ", (plural(plan.summarized_messages, "older message"), "bold"),
        f" (~{human_tokens(plan.summarized_tokens)} tokens){earlier} and keep the last ",
        (plural(plan.kept_messages, "message"), "bold"), f" (~{human_tokens(plan.kept_tokens)} tokens) verbatim. ",
        ("Old tool outputs are first replaced by pointers to saved copies. Nothing is deleted: every original "
         "stays in messages.json, and a focus is applied whenever the summary frees tokens.", "$text-muted"),
    )


PLAN_REFRESH_SECONDS = 0.5
"""How often the open dialog checks whether the history changed under its preview (a turn running meanwhile)."""


class CompactDialog(DialogScreen[CompactResult | None]):
    """Runs ``runtime.compact(focus)``; Esc cancels a running compaction (the history stays as it was).

    The preview of what Run would do is kept true while the dialog is open: made again after a run, and whenever
    the history grew or a turn started or ended (checked twice a second, which costs a count)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel / close")]
    DEFAULT_CSS = """
    CompactDialog #progress { height: 1; display: none; }
    CompactDialog.-running #progress { display: block; }
    CompactDialog #result { margin: 1 0 0 0; height: auto; }
    CompactDialog #plan { margin: 1 0 0 0; height: auto; }
    CompactDialog #body { height: auto; }
    """

    def __init__(self, runtime: SessionRuntimeAPI, *, focus: str = "") -> None:
        """``focus``: filled in the focus box (``/compact FOCUS`` compacts without this dialog)."""
        super().__init__()
        self.runtime = runtime
        self.initial_focus = focus
        self.result: CompactResult | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "Compact the context"
            with VerticalScroll(id="body"):  # scrolls in a small terminal; the buttons stay in sight below it
                yield Static("Summarize older turns now. Optionally say what the summary must keep:",
                             classes="dialog--message")
                yield Input(self.initial_focus, placeholder="focus (optional), e.g. the API design decisions",
                            id="focus")
                yield Static(describe_plan(self.runtime.compaction_plan()), id="plan", classes="dialog--message")
                yield LoadingIndicator(id="progress")
                yield Static("", id="result")
            with ButtonRow(classes="dialog--buttons"):
                yield Button("Run", id="run", variant="primary", compact=True)
                yield Button("Close", id="close", compact=True)

    DIALOG_CHROME_ROWS: ClassVar[int] = 5
    """Rows of the dialog that are not its body: border, button row and its margin."""

    def on_resize(self) -> None:
        """The body gets what the screen leaves after the dialog's chrome (the dialog is at most 90% high)."""
        self.query_one("#body").styles.max_height = max(3, int(self.size.height * 0.9) - self.DIALOG_CHROME_ROWS)

    def on_mount(self) -> None:
        self.query_one("#focus", Input).focus()
        self._planned_for = self._history_state()
        self.set_interval(PLAN_REFRESH_SECONDS, self._refresh_plan_if_stale)

    def _history_state(self) -> tuple[int, bool]:
        return self.runtime.history_count(), self.runtime.busy

    def _refresh_plan_if_stale(self) -> None:
        if not self.has_class("-running") and self._history_state() != self._planned_for:
            self.refresh_plan()

    def refresh_plan(self) -> None:
        """Say again what Run would do, for the history as it is now."""
        self._planned_for = self._history_state()
        self.query_one("#plan", Static).update(describe_plan(self.runtime.compaction_plan()))

    @on(Input.Submitted, "#focus")
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.has_class("-running"):
            return
        focus = self.query_one("#focus", Input).value.strip() or None
        if self.runtime.busy:  # the chain compacts before the turn's next model request (or the next turn's)
            self.runtime.request_compact(focus)
            self.query_one("#result", Static).update(Content(
                "A turn is running: the compaction runs before its next model request"
                + (f", focused on: {focus}" if focus else "") + ". The log (Ctrl+L) shows the result."))
            return
        self.add_class("-running")
        self.query_one("#run", Button).disabled = True
        self.query_one("#result", Static).update(Content("compacting…"))
        self._compact(focus)

    @work(exclusive=True, group="compact")
    async def _compact(self, focus: str | None) -> None:
        try:
            self.result = await self.runtime.compact(focus)
        finally:
            self.remove_class("-running")
            self.query_one("#run", Button).disabled = False
        self.query_one("#result", Static).update(describe_result(self.result))
        self.refresh_plan()
        self.query_one("#body").scroll_end(animate=False)  # the outcome in sight, above the buttons

    @on(Button.Pressed, "#close")
    def action_cancel(self) -> None:
        if self.has_class("-running"):
            self.workers.cancel_group(self, "compact")
            self.remove_class("-running")
            self.query_one("#run", Button).disabled = False
            self.query_one("#result", Static).update(Content("Cancelled; the history is unchanged."))
            return
        self.dismiss(self.result)
