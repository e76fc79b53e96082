"""/context: what fills the window, as rows with bars, totals and where the window size came from."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Button, Static

from tui.agent.runtime_api import ContextBreakdown
from tui.app.formatting import human_size, human_tokens
from tui.app.screens.basic_dialogs import ButtonRow, DialogScreen
from tui.app.widgets.subagent_rows import subagent_context_lines
from tui.chain.events import describe_window_source
from tui.text.cost_text import FREE_OFFLINE, PRICE_UNKNOWN, format_usd, totals_details, totals_label
from tui.text.terminal_text import visible
from tui.text.wording import plural

BAR = 24


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
        Content(f"compaction at {report.compaction_threshold:.0%} of that "
                f"({human_tokens(int(report.compaction_threshold * report.limit))}), summary at "
                f"{report.summarize_threshold:.0%} ({human_tokens(int(report.summarize_threshold * report.limit))}); "
                f"{compactions_text(report)}"),
        Content(f"history on disk: {plural(report.message_count, 'message')}, {human_size(report.history_bytes)}"
                + (f" in …/{'/'.join(report.history_file.parts[-3:])}" if report.history_file else "")),
        *project_lines(report),
        *cost_lines(report, offline=offline),
        *subagent_context_lines(report.subagents),
        Content.styled("bars: share of what is in context; percent: share of the window", "$text-muted"),
    ]
    return Content("\n").join([*rows, *footer])


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
    """A read-only report; Esc or Close dismisses it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]
    DEFAULT_CSS = """
    ContextScreen .dialog { width: 96; }
    """

    def __init__(self, report: ContextBreakdown, *, offline: bool = False) -> None:
        """``offline``: the session is on the offline model (its cost reads "free (offline)")."""
        super().__init__()
        self.report = report
        self.offline = offline

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = "What fills the context window"
            yield Static(breakdown_lines(self.report, offline=self.offline), id="breakdown",
                         classes="dialog--message")
            with ButtonRow(classes="dialog--buttons"):
                yield Button("Close", id="close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
