"""Plain-text descriptions of chain events, shared by ``deep-tui run`` and the app
(no Textual here: ``run`` prints exactly what the app shows)."""

from __future__ import annotations

from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EvictedEvent,
    FilesRestored,
    MemoryChanged,
    SubagentRan,
    UsageEvent,
)
from tui.text.cost_text import compaction_cost_text, format_usd
from tui.text.terminal_text import visible
from tui.text.token_text import human_tokens
from tui.text.tool_call_text import call_source
from tui.text.wording import plural


def replaced_label(event: CompactionFinished, *, short: bool = False) -> str:
    """What a compaction replaced: messages for a summary, old tool outputs/arguments (parts) for tier 2."""
    count = event.messages_replaced
    if event.strategy in ("pointer", "mask"):
        images = min(count, event.images_replaced)
        if short:
            parts = [plural(count - images, "tool part")] if count > images or not images else []
            return " + ".join([*parts, *([plural(images, "image")] if images else [])])
        tools = plural(count - images, "old tool output/argument", "old tool outputs/arguments")
        if not images:
            return tools
        return (f"{tools} and " if count > images else "") + plural(images, "old image")
    return plural(count, "msg") if short else plural(count, "message")


KEPT_AS_IT_WAS = "kept the history as it is"
_UNCHANGED_SUFFIXES = ("; history left unchanged", "history left unchanged")


def failed_compaction_line(event: CompactionFailed) -> str:
    """The chat's line for an attempt that changed nothing, e.g. ``compaction tried: a summary would only free
    34 of ~4,697 tokens — kept the history as it is (cost $0.0116)``."""
    if event.would_free is not None:
        what = (f"a summary would only free {event.would_free:,} of ~{event.tokens_estimated:,} tokens"
                if event.tokens_estimated else f"a summary would only free {plural(event.would_free, 'token')}")
    else:
        what = event.reason
        for suffix in _UNCHANGED_SUFFIXES:
            what = what.removesuffix(suffix)
        what = what.strip().rstrip(";,") or "it failed"
        if event.strategy != "summary":
            what = f"{event.strategy}: {what}"
    cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests)
    return f"compaction tried: {what} — {KEPT_AS_IT_WAS}" + (f" ({cost})" if cost else "")


def describe_event(event: ChainEvent) -> str:
    """One line saying what happened, e.g. ``summarized 142 messages, 96k → 18k tokens, retention 0.97``."""
    if isinstance(event, CompactionFinished):
        verbs = {"summary": "summarized", "fallback": "dropped (fallback)",
                 "pointer": "compacted", "mask": "masked"}
        text = (f"{verbs.get(event.strategy, event.strategy)} {replaced_label(event)}, "
                f"{human_tokens(event.tokens_before)} → {human_tokens(event.tokens_after)} tokens")
        if event.retention_score is not None:
            text += f", retention {event.retention_score:.2f}"
            if event.low_retention:
                text += f" ({plural(event.missing, 'identifier')} missing)"
        if event.focus:
            text += f", focus: {event.focus}"
        if event.files_created:
            text += f", {plural(len(event.files_created), 'file')} saved"
        cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests,
                                    saves_per_request=event.saves_usd_per_request, saved_tokens=event.tokens_saved)
        return text + (f", {cost.replace(' · ', ', ')}" if cost else "")
    if isinstance(event, CompactionFailed):
        cost = compaction_cost_text(priced=event.priced, cost_usd=event.cost_usd, cost_requests=event.cost_requests)
        return f"compaction ({event.strategy}) failed: {event.reason}" + (f" ({cost})" if cost else "")
    if isinstance(event, CompactionStarted):
        return f"compaction started ({event.trigger}) at {human_tokens(event.tokens)} tokens"
    if isinstance(event, EvictedEvent):
        source = call_source(event.tool_name, event.args)
        if event.error:
            return f"could not save the output of {source} ({event.error}); kept a preview"
        return f"evicted the output of {source} ({human_tokens(event.tokens)} tokens), saved as {event.path}"
    if isinstance(event, UsageEvent):
        marker = " (window assumed)" if event.assumed else ""
        return (f"context {event.fraction:.0%}: {human_tokens(event.tokens)} / "
                f"{human_tokens(event.window)} tokens{marker}")
    if isinstance(event, MemoryChanged):
        return f"memory changed: {event.path}"
    if isinstance(event, SubagentRan):
        return subagent_line(event)
    if isinstance(event, FilesRestored):
        return restored_line(event)
    return event.kind


def subagent_line(event: SubagentRan) -> str:
    """``subagent 2 (explore) finished: find the config loader — 3 requests, context 12.4k / 200k, $0.0123,
    answer 1,204 chars``."""
    cost = "price unknown" if event.cost_usd is None else format_usd(event.cost_usd)
    parts = [plural(event.requests, "request"),
             f"context {human_tokens(event.tokens)} / {human_tokens(event.window)}"
             + (f" (peak {human_tokens(event.peak_tokens)})" if event.peak_tokens > event.tokens else ""),
             cost]
    if event.compactions:
        parts.append(plural(event.compactions, "compaction"))
    if event.outcome == "finished":
        parts.append(f"answer {event.answer_chars:,} chars")
    elif event.reason:
        parts.append(event.reason)
    return f"subagent {event.number} ({event.name}) {event.outcome}: {event.description} — {', '.join(parts)}"


def restored_line(event: FilesRestored) -> str:
    """``rewind: 3 files back to before message 7 (kept yours: a.py; undo: rewind 12)``."""
    text = f"rewind: {plural(event.count, 'file')} back to before message {event.message}"
    notes = []
    if event.kept:
        notes.append("kept yours: " + ", ".join(visible(path) for path in event.kept[:5]))
    if event.failed:
        notes.append(f"{plural(len(event.failed), 'path')} not restored: {visible(event.failed[0])}")
    if event.undo is not None:
        notes.append(f"undo: rewind {event.undo}")
    return text + (f" ({'; '.join(notes)})" if notes else "")
