"""/context: what fills the window, as rows with bars, totals and where the window size came from; and the
compaction controls (issue 30): the automatic compaction threshold and its off switch, for this session."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Static

from tui.app.formatting import human_size, human_tokens
from tui.app.screens.approval_dialog import DIALOG_HEIGHT_SHARE
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen, action_button
from tui.app.widgets.subagent_rows import subagent_context_lines
from tui.base.config import ConfigError
from tui.chain.events import describe_window_source
from tui.text.cost_text import FREE_OFFLINE, PRICE_UNKNOWN, format_usd, totals_details, totals_label
from tui.text.terminal_text import visible
from tui.text.wording import plural

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from tui.agent.runtime_api import ContextBreakdown

BAR = 24
THRESHOLD_STEP = 5
"""Percentage points one press of −/+ moves the automatic compaction threshold."""
THRESHOLD_RANGE = (5, 95)
"""The thresholds −/+ reach, in percent of what a request may carry."""


def stepped(threshold: float, steps: int) -> float:
    """``threshold`` moved by ``steps`` of :data:`THRESHOLD_STEP` points onto that grid, within :data:`THRESHOLD_RANGE`."""
    percent = round(threshold * 100 / THRESHOLD_STEP) * THRESHOLD_STEP + steps * THRESHOLD_STEP
    low, high = THRESHOLD_RANGE
    return min(high, max(low, percent)) / 100


class CompactionControls(Protocol):
    """Changes the session's compaction controls and returns the report as it is then (``ConfigError``: refused)."""

    def __call__(self, *, threshold: float | None = None, auto: bool | None = None,
                 reset: bool = False) -> ContextBreakdown: ...


def breakdown_lines(report: ContextBreakdown, *, offline: bool = False) -> Content:
    """One row per slice: a bar of its share of what is in context, tokens, and percent of the window."""
    rows: list[Content] = []
    labels = [visible(row.label) for row in report.slices]  # "tool results: <name>": a model's tool name
    label_width = max((len(label) for label in labels), default=10)
    in_context = report.total or 1
    for row, label in zip(report.slices, labels, strict=True):
        share = row.tokens / report.window if report.window else 0.0
        filled = min(BAR, round(row.tokens / in_context * BAR))
        rows.append(Content.assemble(
            f"{label:<{label_width}}  ",
            ("█" * filled, "$accent"), ("░" * (BAR - filled), "$text-muted"),
            f"  {human_tokens(row.tokens):>6}  {share * 100:5.1f}%",
        ))
    calibrated = (f"; estimates × {report.calibration:.2f} to match the provider's counts"
                  if report.calibration != 1.0 else "")
    footer = [
        Content(""),
        *total_lines(report),
        Content(f"a request may carry {human_tokens(report.limit)}: {human_tokens(report.reserve)} are kept for the "
                f"answer and {human_tokens(report.margin)} for estimate error{calibrated}"),
        threshold_line(report),
        Content(f"history on disk: {plural(report.message_count, 'message')}, {human_size(report.history_bytes)}"
                + (f" in …/{'/'.join(report.history_file.parts[-3:])}" if report.history_file else "")),
        *project_lines(report),
        *cost_lines(report, offline=offline),
        *subagent_context_lines(report.subagents),
        Content.styled("bars: share of what is in context; percent: share of the window", "$text-muted"),
    ]
    return Content("\n").join([*rows, *footer])


def threshold_line(report: ContextBreakdown) -> Content:
    """``compaction at 85% of that (102k), summary at 90% (108k); 2 compactions so far`` — or, with automatic
    compaction off, what happens instead."""
    compaction = f"{report.compaction_threshold:.0%} ({human_tokens(int(report.compaction_threshold * report.limit))})"
    summary = f"{report.summarize_threshold:.0%} ({human_tokens(int(report.summarize_threshold * report.limit))})"
    if not report.auto_compact:
        return Content.assemble(("automatic compaction off", "bold $warning"),
                                f", threshold {compaction}: a request over the limit asks before a summary; "
                                f"{compactions_text(report)}")
    return Content(f"compaction at {compaction} of that, summary at {summary}; {compactions_text(report)}")


def controls_line(report: ContextBreakdown) -> Content:
    """What the controls set, and whether it is this session's own setting or the config's."""
    own = (report.compaction_threshold != report.configured_threshold or report.auto_compact != report.configured_auto)
    configured = (f"{report.configured_threshold:.0%}, {'on' if report.configured_auto else 'off'}")
    where = f"this session's (config: {configured})" if own else "as your config sets it"
    return Content.assemble(("automatic compaction  ", "bold"),
                            ("on" if report.auto_compact else "off", "bold" if report.auto_compact else "bold $warning"),
                            f" at {report.compaction_threshold:.0%} — {where}")


def _share(tokens: int, window: int) -> str:
    return f"{tokens / window * 100 if window else 0:.1f}%"


def total_lines(report: ContextBreakdown) -> list[Content]:
    """The context's size: the gauge's figure (the provider's count at the last request plus an estimate since)
    when there is one, with the rows' sum named for what it is (an estimate of each part); else the estimate."""
    of_window = f"of {human_tokens(report.window)} tokens"
    source = describe_window_source(report.window_source)
    estimate = report.total
    if report.counted is None:
        return [Content.assemble(("total (estimated)  ", "bold"),
                                 f"{human_tokens(estimate)} {of_window} ({_share(estimate, report.window)}), {source}")]
    counted = report.counted
    gap = estimate - counted
    differs = (f"; {human_tokens(abs(gap))} {'more' if gap > 0 else 'less'} than the count"
               if human_tokens(estimate) != human_tokens(counted) else "")
    return [
        Content.assemble(("in context  ", "bold"), f"{human_tokens(counted)} {of_window} "
                         f"({_share(counted, report.window)}), {source}"),
        Content.styled("  as the gauge: the provider's count at the last request plus an estimate since",
                       "$text-muted"),
        Content.assemble(("rows (estimated)  ", "bold"),
                         f"{human_tokens(estimate)}: each part's size estimated from its characters{differs}"),
    ]


def compactions_text(report: ContextBreakdown) -> str:
    """``2 compactions so far, 1 attempt that freed too little``."""
    text = f"{plural(report.compressions, 'compaction')} so far"
    if report.freed_too_little:
        text += (f", {plural(report.freed_too_little, 'attempt')} that freed too little")
    if report.other_failed_compactions:
        text += f", {plural(report.other_failed_compactions, 'failed attempt')}"
    return text


def project_lines(report: ContextBreakdown) -> list[Content]:
    """Which AGENTS.md / CLAUDE.md files the "project instructions" row holds."""
    if not report.project_files:
        return []
    names = ", ".join(visible(str(path)) for path in report.project_files)
    return [Content.assemble(("project instructions from  ", "bold"), names)]


def cost_lines(report: ContextBreakdown, *, offline: bool = False) -> list[Content]:
    """What the session, its last turn and its last request cost (genai-prices); ``offline``: the session is on
    the offline model (free)."""
    lines = [Content.assemble(("cost  ", "bold"), "session ", totals_details(report.session_cost, offline=offline))]
    if totals_label(report.session_cost, offline=offline) == FREE_OFFLINE:
        return lines  # nothing was priced: no turn or request to price either
    if report.turn_cost is not None:
        last = PRICE_UNKNOWN if report.last_request_usd is None else format_usd(report.last_request_usd)
        lines.append(Content(f"      last turn {totals_details(report.turn_cost)}; last request {last}"))
    return lines


class ContextScreen(DialogScreen[None]):
    """The report; with ``controls``, the compaction threshold (``-``/``+``), the off switch (``a``) and the config's
    values again (``r``), each a button too. Esc or Close dismisses it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("a", "toggle_auto", "Automatic compaction on/off", show=False),
        Binding("minus", "threshold(-1)", "Lower the threshold", show=False),
        Binding("plus,equals_sign", "threshold(1)", "Raise the threshold", show=False),
        Binding("r", "reset", "As the config says", show=False),
    ]
    DEFAULT_CSS = """
    ContextScreen .dialog { width: 96; }
    ContextScreen #breakdown-body { height: auto; max-height: 50vh; margin: 1 0; }
    ContextScreen #compaction-state { width: 1fr; }
    ContextScreen #compaction-error { width: 1fr; color: $error; display: none; }
    ContextScreen #compaction-error.-shown { display: block; }
    ContextScreen .dialog--buttons { margin-top: 1; }
    ContextScreen .dialog--buttons Button { margin-left: 1; }
    """

    def __init__(self, report: ContextBreakdown, *, offline: bool = False,
                 controls: CompactionControls | None = None) -> None:
        """``offline``: the session is on the offline model (its cost reads "free (offline)"); ``controls``: the
        session's compaction controls (``None``: none to change, the session is still opening)."""
        super().__init__()
        self.report = report
        self.offline = offline
        self.controls = controls

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "What fills the context window"
            with VerticalScroll(id="breakdown-body"):  # gives way on a small screen: the controls stay in view
                yield Static(breakdown_lines(self.report, offline=self.offline), id="breakdown")
            if self.controls is not None:
                yield Static(controls_line(self.report), id="compaction-state")
                yield Static("", id="compaction-error")
            with ButtonRow(classes="dialog--buttons"):
                if self.controls is not None:
                    yield action_button(self._auto_label(), "screen.toggle_auto", id="auto-compact")
                    yield action_button("−5% (-)", "screen.threshold(-1)", id="threshold-down")
                    yield action_button("+5% (+)", "screen.threshold(1)", id="threshold-up")
                    yield action_button("Reset (r)", "screen.reset", id="compaction-reset")
                yield action_button("Close (esc)", "screen.close", variant="primary", id="close")

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit_body)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_body)

    def _fit_body(self) -> None:
        """The report gives up rows (it scrolls) so that the controls and Close always fit on the screen."""
        body = self.query_one("#breakdown-body")
        dialog = body.parent
        if not isinstance(dialog, Widget) or not self.size.height:
            return
        others = sum(child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
                     for child in dialog.children if child.display and child is not body)
        room = (int(self.size.height * DIALOG_HEIGHT_SHARE) - dialog.styles.gutter.height - others
                - body.styles.margin.top - body.styles.margin.bottom)
        body.styles.max_height = max(3, room)

    def _auto_label(self) -> str:
        return "Turn off (a)" if self.report.auto_compact else "Turn on (a)"

    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle_auto(self) -> None:
        self._change(auto=not self.report.auto_compact)

    def action_threshold(self, steps: int) -> None:
        self._change(threshold=stepped(self.report.compaction_threshold, steps))

    def action_reset(self) -> None:
        self._change(reset=True)

    def _change(self, *, threshold: float | None = None, auto: bool | None = None, reset: bool = False) -> None:
        if self.controls is None:
            return
        error = self.query_one("#compaction-error", Static)
        try:
            report = self.controls(threshold=threshold, auto=auto, reset=reset)
        except (ConfigError, OSError) as problem:  # out of range, or session.json could not be written
            error.update(Content(f"not changed: {problem}"))
            error.add_class("-shown")
            return
        error.remove_class("-shown")
        self.report = report
        self.query_one("#breakdown", Static).update(breakdown_lines(report, offline=self.offline))
        self.query_one("#compaction-state", Static).update(controls_line(report))
        self.query_one("#auto-compact", Button).label = Content(self._auto_label())
        self.call_after_refresh(self._fit_body)
