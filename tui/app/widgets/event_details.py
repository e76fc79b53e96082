"""What the log's details viewer says about one event: labelled sentences a user reads, not a field dump."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from tui.app.formatting import clock_time, human_percent, human_size, human_tokens, literal
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished, EvictedEvent, MemoryChanged, SubagentRan
from tui.text.cost_text import PRICE_UNKNOWN, format_usd
from tui.text.tool_call_text import call_source
from tui.text.wording import message_number, plural

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import tzinfo

__all__ = ["event_details"]

STRATEGY_WORDS = {
    "summary": "Old turns summarized",
    "fallback": "Oldest messages dropped to fit the window",
    "pointer": "Old tool arguments replaced by pointers to saved files",
    "mask": "Old tool outputs replaced by previews",
}
ATTEMPT_WORDS = {
    "summary": "A summary of old turns",
    "fallback": "Dropping the oldest messages",
    "pointer": "Replacing old tool arguments by pointers",
    "mask": "Replacing old tool outputs by previews",
}
TRIGGER_WORDS = {
    "auto": "automatically, as the context passed its threshold",
    "manual": "on request (/compact or Ctrl+G)",
    "preflight": "before a request that would not have fit the window",
}


def _label(name: str, *value: Content | str) -> Content:
    """``Name: value`` — the name muted, the value as given (strings shown literally)."""
    return Content.assemble((f"{name}: ", "$text-muted"), *(literal(part) if isinstance(part, str) else part
                                                           for part in value))


def _listed(name: str, items: Sequence[str]) -> Content:
    return Content.assemble((f"{name} ({len(items)}):", "$text-muted"),
                            *(Content.assemble("\n    ", literal(item)) for item in items))


def _cost(priced: bool, cost_usd: float | None, requests: int, saves_per_request: float | None = None,
          saved_tokens: int = 0) -> Content:
    if not priced:
        return _label("Cost", "not recorded (before deep-tui priced compactions)")
    if not requests:
        spent = "nothing — no model call"
    else:
        amount = format_usd(cost_usd) if cost_usd is not None else PRICE_UNKNOWN
        spent = f"{amount} for {plural(requests, 'summarizer request')}"
    if saved_tokens > 0:
        saving = format_usd(saves_per_request) if saves_per_request is not None else PRICE_UNKNOWN
        spent += f"; each later request costs about {saving} less"
    return _label("Cost", spent)


def _finished(event: CompactionFinished) -> list[Content]:
    replaced = ("messages" if event.strategy in ("summary", "fallback") else "old tool outputs/arguments")
    lines = [
        _label("What happened", f"{STRATEGY_WORDS.get(event.strategy, event.strategy)}, "
                                f"{TRIGGER_WORDS.get(event.trigger, event.trigger)}."),
        _label("Context", f"{human_tokens(event.tokens_before)} → {human_tokens(event.tokens_after)} tokens "
                          f"({human_tokens(event.tokens_saved)} freed)"),
        _label("Replaced", f"{event.messages_replaced:,} {replaced}"),
    ]
    if event.focus:
        lines.append(_label("Focus", f"“{event.focus}”"))
    if event.retention_score is not None:
        lines.append(_label("Retention", f"{human_percent(event.retention_score)} of the identifiers in what was "
                                         "replaced (paths, names, errors, numbers) are in the summary"))
    if event.missing_identifiers:
        lines.append(_listed("Not in the summary", event.missing_identifiers))
    if event.files_created:
        lines.append(_listed("Files saved", event.files_created))
    if event.summary_index is not None:
        lines.append(_label("The summary", f"message {message_number(event.summary_index)} of the session"))
    lines.append(_cost(event.priced, event.cost_usd, event.cost_requests, event.saves_usd_per_request,
                       event.tokens_saved))
    return lines


def _failed(event: CompactionFailed) -> list[Content]:
    lines = [
        _label("What happened", f"{ATTEMPT_WORDS.get(event.strategy, event.strategy)} was tried "
                                f"{TRIGGER_WORDS.get(event.trigger, event.trigger)} and failed; "
                                "the history is exactly as it was."),
        _label("Why", event.reason),
        _label("Context", f"{human_tokens(event.tokens)} tokens"),
    ]
    if event.focus:
        lines.append(_label("Focus", f"“{event.focus}”"))
    lines.append(_cost(event.priced, event.cost_usd, event.cost_requests))
    return lines


def _evicted(event: EvictedEvent) -> list[Content]:
    lines = [_label("From", call_source(event.tool_name, event.args))]
    if event.args:
        lines.append(_label("Arguments", event.args))
    size = f"{human_size(event.size_bytes)}, about {human_tokens(event.tokens)} tokens"
    if event.error:
        lines += [_label("Size", size),
                  _label("What happened", "too large for the context, and it could not be saved: the model got a "
                                          "preview only."),
                  _label("Why not saved", event.error)]
    else:
        lines += [_label("Size", size),
                  _label("What happened", "too large for the context: saved whole; the model got a preview and "
                                          "can read the rest with read_file."),
                  _label("Saved as", event.path)]
    if event.tool_call_id:
        lines.append(_label("Call id", event.tool_call_id))
    return lines


TITLES = {CompactionFinished: "Compaction", CompactionFailed: "Compaction failed", EvictedEvent: "Tool output saved",
          MemoryChanged: "Memory changed", SubagentRan: "Subagent"}


def event_details(event: ChainEvent, tz: tzinfo | None = None) -> Content:
    """``event`` for the details viewer: a title with its time, then one labelled line per fact."""
    title = TITLES.get(type(event), event.kind)
    lines = [Content.styled(f"{title} at {clock_time(event.timestamp, with_date=True, tz=tz)}", "bold")]
    if isinstance(event, CompactionFinished):
        lines += _finished(event)
    elif isinstance(event, CompactionFailed):
        lines += _failed(event)
    elif isinstance(event, EvictedEvent):
        lines += _evicted(event)
    elif isinstance(event, MemoryChanged):
        lines.append(_label("File", event.path))
    elif isinstance(event, SubagentRan):
        lines += _subagent(event)
    return Content("\n").join(lines)


def _subagent(event: SubagentRan) -> list[Content]:
    """A subagent's facts: what it was asked, how it ended, its own context, what it cost, where its history is."""
    cost = PRICE_UNKNOWN if event.cost_usd is None else format_usd(event.cost_usd)
    lines = [_label("Subagent", f"{event.number} ({event.name})"), _label("Task", event.description),
             _label("Outcome", event.outcome + (f": {event.reason}" if event.reason else "")),
             _label("Its context", f"{event.tokens:,} tokens at the end, {event.peak_tokens:,} at most, of a "
                                   f"{event.window:,}-token window of its own"),
             _label("Requests", f"{event.requests} ({event.input_tokens:,} tokens in, {event.output_tokens:,} out), "
                                f"{cost} — included in the session's cost")]
    if event.compactions:
        lines.append(_label("Compactions", str(event.compactions)))
    if event.outcome == "finished":
        lines.append(_label("Answer", f"{event.answer_chars:,} characters (all the session's context received)"))
    if event.history:
        lines.append(_label("History", event.history))
    return lines
