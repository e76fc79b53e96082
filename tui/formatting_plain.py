"""Plain-text descriptions of chain events and token counts, shared by ``deep-tui run`` and the app
(no Textual here: ``run`` prints exactly what the app shows)."""

from __future__ import annotations

import json

from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EvictedEvent,
    MemoryChanged,
    UsageEvent,
)
from tui.cost_text import compaction_cost_text
from tui.wording import plural


def human_tokens(tokens: int | None) -> str:
    """A compact token count: ``950`` → ``"950"``, ``96_300`` → ``"96.3k"``, ``200_000`` → ``"200k"``, ``1_250_000`` → ``"1.25M"``.

    ``None`` (nothing measured yet) gives ``"–"``.
    """
    if tokens is None:
        return "–"
    sign = "-" if tokens < 0 else ""
    value = abs(tokens)
    if value < 1000:
        return f"{sign}{value}"
    if value < 999_950:
        return f"{sign}{trim_zeros(f'{value / 1000:.1f}')}k"
    return f"{sign}{trim_zeros(f'{value / 1_000_000:.2f}')}M"


def trim_zeros(number: str) -> str:
    """``"96.0"`` → ``"96"``, ``"1.20"`` → ``"1.2"``."""
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number


PATH_ARGUMENTS = ("path", "file_path")
PATTERN_ARGUMENTS = ("pattern", "query", "url", "command")


def _arguments(args_json: str) -> dict[str, object]:
    try:
        parsed = json.loads(args_json) if args_json else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _first_text(arguments: dict[str, object], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:120]
    return None


def path_argument(args_json: str) -> str | None:
    """The file a tool call read or wrote (its ``path`` argument), or ``None``."""
    return _first_text(_arguments(args_json), PATH_ARGUMENTS)


def call_source(tool_name: str, args_json: str) -> str:
    """What a tool call looked at, as a user would say it: ``read_file src/app.py``, ``grep 'TODO' in src``,
    or just the tool's name when it took neither a path nor a pattern."""
    arguments = _arguments(args_json)
    path = _first_text(arguments, PATH_ARGUMENTS)
    pattern = _first_text(arguments, PATTERN_ARGUMENTS)
    if pattern is not None:
        return f"{tool_name} '{pattern}'" + (f" in {path}" if path else "")
    return f"{tool_name} {path}" if path else tool_name


def replaced_label(event: CompactionFinished, *, short: bool = False) -> str:
    """What a compaction replaced: messages for a summary, old tool outputs/arguments (parts) for tier 2."""
    count = event.messages_replaced
    if event.strategy in ("pointer", "mask"):
        return (plural(count, "tool part") if short
                else plural(count, "old tool output/argument", "old tool outputs/arguments"))
    return plural(count, "msg") if short else plural(count, "message")


def describe_event(event: ChainEvent) -> str:
    """One line saying what happened, e.g. ``summarized 142 messages, 96k → 18k tokens, retention 0.97``."""
    if isinstance(event, CompactionFinished):
        verbs = {"summary": "summarized", "fallback": "dropped (fallback)",
                 "pointer": "compacted", "mask": "masked"}
        text = (f"{verbs.get(event.strategy, event.strategy)} {replaced_label(event)}, "
                f"{human_tokens(event.tokens_before)} → {human_tokens(event.tokens_after)} tokens")
        if event.retention_score is not None:
            text += f", retention {event.retention_score:.2f}"
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
    return event.kind
