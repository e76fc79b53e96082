"""The compression-event log: every eviction, compaction and failure, newest first.

Usage events (one per model request) and compaction-started events are left
out: the first would flood the log, the second is always followed by a
finished or failed event that says more. At most :data:`MAX_VISIBLE_EVENTS`
rows are kept in the list so its cost stays bounded; the totals line counts
every event ever added.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from textual import on
from textual.content import Content
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.app.formatting import clock_time, human_percent, human_size, human_tokens, literal, short_id
from tui.app.screens.basic_dialogs import TextViewerModal
from tui.app.widgets.event_details import event_details
from tui.app.widgets.subagent_rows import subagent_event_row
from tui.chain.event_text import replaced_label
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    EvictedEvent,
    MemoryChanged,
    SubagentRan,
)
from tui.text.cost_text import compaction_cost_text
from tui.text.tool_call_text import call_source
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from textual.app import ComposeResult

    from tui.agent.runtime_api import InheritedEvent

__all__ = ["MAX_VISIBLE_EVENTS", "EventLogPanel", "EventTotals", "compact_timestamp", "event_row", "is_logged"]

MAX_VISIBLE_EVENTS = 500
"""The list keeps this many of the newest events; older ones only count in the totals."""

LOGGED_TYPES = (EvictedEvent, CompactionFinished, CompactionFailed, MemoryChanged, SubagentRan)
INDENT = " " * 10


def is_logged(event: ChainEvent) -> bool:
    """True for the events the log shows (not usage, not compaction-started)."""
    return isinstance(event, LOGGED_TYPES)


def compact_timestamp(timestamp: float, *, now: float, tz: tzinfo | None = None) -> str:
    """``"14:03:22"`` for today, ``"11-20 14:03"`` for an earlier (or later) day."""
    moment = datetime.fromtimestamp(timestamp, tz=tz)
    if moment.date() == datetime.fromtimestamp(now, tz=tz).date():
        return clock_time(timestamp, tz=tz)
    return moment.strftime("%m-%d %H:%M")


def _muted(text: str) -> tuple[str, str]:
    return (text, "$text-muted")


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1] or path


def event_row(event: ChainEvent, *, now: float, tz: tzinfo | None = None) -> Content | None:
    """The (two-line) list entry for ``event``, or ``None`` when it is not logged.

    Every piece of text from a model, a user or a tool is literal content.
    """
    stamp = (f"{compact_timestamp(event.timestamp, now=now, tz=tz):<10}", "$text-muted")
    if isinstance(event, CompactionFinished):
        details: list[Content | tuple[str, str] | str] = []
        if event.retention_score is not None:
            details.append(f"retention {human_percent(event.retention_score)}")
        if event.missing_identifiers:
            details.append((f"{len(event.missing_identifiers)} missing", "$text-warning"))
        if event.focus:
            details.append(Content.assemble("focus “", literal(event.focus), "”"))
        if event.files_created:
            count = len(event.files_created)
            details.append(plural(count, "file"))
        details.append(replaced_label(event, short=True))
        cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests,
                                    saves_per_request=event.saves_usd_per_request, saved_tokens=event.tokens_saved)
        if cost:
            details.append(cost)
        second = Content(" · ").join(part if isinstance(part, Content) else Content.assemble(part) for part in details)
        return Content.assemble(
            stamp,
            (f"✂ {event.strategy}", "$text-success bold"),
            _muted(f" · {event.trigger}  "),
            f"{human_tokens(event.tokens_before)} → {human_tokens(event.tokens_after)} ",
            (f"(−{human_tokens(event.tokens_saved)})", "$text-success"),
            "\n",
            INDENT,
            second.stylize("$text-muted"),
        )
    if isinstance(event, CompactionFailed):
        cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests)
        return Content.assemble(
            stamp,
            (f"✗ {event.strategy} failed", "$text-error bold"),
            _muted(f" · {event.trigger}  at {human_tokens(event.tokens)}"),
            literal(f" · focus “{event.focus}”" if event.focus else "", "$text-muted"),
            _muted(f" · {cost}" if cost else ""),
            "\n",
            INDENT,
            ("reason: ", "$text-error"),
            literal(event.reason),
        )
    if isinstance(event, EvictedEvent):  # named by what was read; the saved file comes second
        second = (
            Content.assemble(("write failed: ", "$text-error"), literal(event.error))
            if event.error
            else Content.assemble(_muted("saved as "), literal(_file_name(event.path), "$text-muted"))
        )
        return Content.assemble(
            stamp,
            ("⇣ evicted ", "$text-accent bold"),
            literal(call_source(event.tool_name, event.args)),
            _muted(f"  {human_tokens(event.tokens)} tok · {human_size(event.size_bytes)}"),
            "\n",
            INDENT,
            second,
        )
    if isinstance(event, MemoryChanged):
        return Content.assemble(stamp, ("✎ memory updated ", "$text-secondary bold"), literal(_file_name(event.path)))
    if isinstance(event, SubagentRan):
        return subagent_event_row(event, stamp)
    return None


def inherited_mark(session_id: str) -> str:
    """On an event or output a fork inherited: the ancestor session it belongs to."""
    return f"inherited from {short_id(session_id)}"


def flow(parts: list[tuple[str, Content]], width: int | None) -> Content:
    """``(separator, part)`` pairs joined (the first separator is dropped), a new line instead of the separator
    where the next part would pass ``width`` cells: a line breaks between two items, never inside one."""
    lines: list[list[Content]] = [[]]
    used = 0
    for separator, part in parts:
        if lines[-1] and width is not None and used + len(separator) + part.cell_length > width:
            lines.append([])
            used = 0
        if lines[-1]:
            lines[-1].append(Content(separator))
            used += len(separator)
        lines[-1].append(part)
        used += part.cell_length
    return Content("\n").join(Content.assemble(*line) for line in lines)


@dataclass
class EventTotals:
    """Running counts over every logged event."""

    compactions: int = 0
    failures: int = 0
    evictions: int = 0
    evicted_tokens: int = 0
    saved_by_strategy: dict[str, int] = field(default_factory=dict)

    def add(self, event: ChainEvent) -> None:
        """Count ``event`` (events the log does not show are ignored)."""
        if isinstance(event, CompactionFinished):
            self.compactions += 1
            self.saved_by_strategy[event.strategy] = self.saved_by_strategy.get(event.strategy, 0) + event.tokens_saved
        elif isinstance(event, CompactionFailed):
            self.failures += 1
        elif isinstance(event, EvictedEvent) and not event.error:
            self.evictions += 1
            self.evicted_tokens += event.tokens

    @property
    def tokens_saved(self) -> int:
        return sum(self.saved_by_strategy.values())

    def render(self, width: int | None = None) -> Content:
        """``"3 compactions · 1 failed · saved 120k (summary 80k · pointer 40k) · 2 evictions (45k tokens)"``; with
        ``width``, a line breaks between two items, never inside one."""
        dot = " · "
        parts: list[tuple[str, Content]] = [(dot, Content(plural(self.compactions, "compaction")))]
        if self.failures:
            parts.append((dot, Content.styled(f"{self.failures} failed", "$text-error")))
        if self.saved_by_strategy:
            parts.append((dot, Content.assemble("saved ", (human_tokens(self.tokens_saved), "$text-success bold"))))
            by_strategy = " · ".join(
                f"{name} {human_tokens(saved)}"
                for name, saved in sorted(self.saved_by_strategy.items(), key=lambda item: (-item[1], item[0])))
            parts.append((" ", Content(f"({by_strategy})")))
        evictions = plural(self.evictions, "eviction")
        parts.append((dot, Content(f"{evictions} ({human_tokens(self.evicted_tokens)} tokens)" if self.evictions
                                   else evictions)))
        return flow(parts, width)


class EventLogPanel(Widget):
    """Evictions, compactions and failures, newest first, with totals; Enter shows an event's details."""

    DEFAULT_CSS = """
    EventLogPanel {
        width: 1fr;
        height: 1fr;
        layout: vertical;
    }
    EventLogPanel #event-totals {
        height: auto;
        width: 1fr;
        padding: 0 1;
        border-bottom: solid $panel;
    }
    EventLogPanel #event-list {
        height: 1fr;
        border: none;
    }
    EventLogPanel #event-empty {
        color: $text-muted;
        padding: 1 1;
    }
    """

    def __init__(
        self,
        events: Sequence[ChainEvent] = (),
        *,
        inherited: Sequence[InheritedEvent] = (),
        now: Callable[[], float] = time.time,
        tz: tzinfo | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``events`` oldest first (as ``past_events()`` returns them); ``inherited``: a fork's ancestors' events
        (listed first, each marked with the session it came from); ``now``/``tz`` pin the clock for tests."""
        super().__init__(name=name, id=id, classes=classes)
        self._now = now
        self._tz = tz
        self._visible: deque[tuple[int, ChainEvent, Option]] = deque(maxlen=MAX_VISIBLE_EVENTS)
        self._count = 0
        self.totals = EventTotals()
        self._ready = False
        for item in inherited:
            self._add_without_refresh([item.event], inherited_from=item.session)
        self._add_without_refresh(events)

    def compose(self) -> ComposeResult:
        yield Static(id="event-totals")
        yield OptionList(id="event-list")
        yield Static("No compressions yet. Evictions and compactions will appear here.", id="event-empty")

    def on_mount(self) -> None:
        self._ready = True
        self._refresh_list()

    @property
    def logged_count(self) -> int:
        """How many logged events were ever added (including those scrolled out of the list)."""
        return self._count

    @property
    def visible_events(self) -> list[ChainEvent]:
        """The events in the list, newest first."""
        return [event for _, event, _ in reversed(self._visible)]

    def add_event(self, event: ChainEvent) -> None:
        """Log one live event (ignored if it is not a logged kind)."""
        self.add_events([event])

    def add_events(self, events: Iterable[ChainEvent]) -> None:
        """Log several events (oldest first) with one list refresh."""
        if self._add_without_refresh(events) and self._ready:
            self._refresh_list()

    def _add_without_refresh(self, events: Iterable[ChainEvent], *, inherited_from: str = "") -> bool:
        now = self._now()
        added = False
        for event in events:
            prompt = event_row(event, now=now, tz=self._tz)
            if prompt is None:
                continue
            if inherited_from:
                prompt = Content.assemble(prompt, (f" · {inherited_mark(inherited_from)}", "$text-muted italic"))
            self.totals.add(event)
            self._count += 1
            self._visible.append((self._count, event, Option(prompt, id=f"event-{self._count}")))
            added = True
        return added

    def _totals_width(self) -> int | None:
        """The cells the totals line has (the panel less its padding; ``None`` before layout)."""
        return self.size.width - 2 if self.size.width else None

    def on_resize(self) -> None:
        if self._ready:
            self.query_one("#event-totals", Static).update(self.totals.render(self._totals_width()))

    def _refresh_list(self) -> None:
        self.query_one("#event-totals", Static).update(self.totals.render(self._totals_width()))
        option_list = self.query_one("#event-list", OptionList)
        highlighted = option_list.highlighted_option
        keep_id = highlighted.id if highlighted is not None else None
        options: list[Option | None] = []
        for _, _, option in reversed(self._visible):
            options.extend((option, None))
        hidden = self._count - len(self._visible)
        if hidden:
            options.append(Option(Content.styled(f"… {hidden} older events not shown", "$text-muted italic"), disabled=True))
        option_list.set_options(options)
        if keep_id is not None:
            option_list.highlighted = option_list.get_option_index(keep_id) if keep_id in self._ids() else None
        option_list.display = bool(self._visible)
        self.query_one("#event-empty").display = not self._visible

    def _ids(self) -> set[str]:
        return {f"event-{number}" for number, _, _ in self._visible}

    @on(OptionList.OptionSelected, "#event-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._show_details(event.option.id)

    def action_show_details(self) -> None:
        """Open the highlighted event's full record."""
        option = self.query_one("#event-list", OptionList).highlighted_option
        if option is not None:
            self._show_details(option.id)

    def _show_details(self, option_id: str | None) -> None:
        for number, logged, _ in self._visible:
            if f"event-{number}" == option_id:
                self.app.push_screen(TextViewerModal("Compression event", event_details(logged, self._tz)))
                return
