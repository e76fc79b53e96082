"""How the event log and ``/context`` show a session's subagents (:class:`~tui.chain.events.SubagentRan`): one entry
each — outcome, description, requests, its own context on its own window, its cost (part of the session's).

Every string from the model (a description, a reason) is literal content, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from tui.app.formatting import human_tokens, literal
from tui.text.cost_text import PRICE_UNKNOWN, format_usd
from tui.text.wording import plural

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tui.chain.events import SubagentRan

INDENT = " " * 10
_OUTCOME_STYLES = {"finished": ("⤷ subagent", "$text-accent bold"), "failed": ("✗ subagent", "$text-error bold"),
                   "cancelled": ("⤷ subagent", "$text-warning bold")}


def _cost(event: SubagentRan) -> str:
    return PRICE_UNKNOWN if event.cost_usd is None else format_usd(event.cost_usd)


def subagent_event_row(event: SubagentRan, stamp: tuple[str, str]) -> Content:
    """The event log's two lines for a subagent: ``⤷ subagent 2 explore · finished  find the loader`` then its
    requests, its context (peak) on its window, compactions, cost, and its answer's size or why it stopped."""
    label, style = _OUTCOME_STYLES.get(event.outcome, ("⤷ subagent", "bold"))
    details = [plural(event.requests, "request"),
               f"context {human_tokens(event.tokens)}/{human_tokens(event.window)}"
               + (f" (peak {human_tokens(event.peak_tokens)})" if event.peak_tokens > event.tokens else ""),
               _cost(event)]
    if event.compactions:
        details.append(plural(event.compactions, "compaction"))
    second: Content = Content(" · ".join(details)).stylize("$text-muted")
    if event.outcome == "finished":
        second = Content.assemble(second, (f" · answer {event.answer_chars:,} chars", "$text-muted"))
    elif event.reason:
        second = Content.assemble(second, (" · ", "$text-muted"), literal(event.reason[:200], "$text-warning"))
    return Content.assemble(stamp, (f"{label} {event.number} ", style), literal(event.name[:40]),
                            (f" · {event.outcome}  ", "$text-muted"), literal(event.description[:80]),
                            "\n", INDENT, second)


def subagent_context_lines(subagents: Sequence[SubagentRan]) -> list[Content]:
    """``/context``'s lines for the session's subagents: none of their context is in this window, their cost is in
    the session's. Empty when the session ran none."""
    if not subagents:
        return []
    total = [event.cost_usd for event in subagents]
    cost = PRICE_UNKNOWN if any(value is None for value in total) else format_usd(sum(v or 0.0 for v in total))
    lines = [Content(""), Content(f"{plural(len(subagents), 'subagent')} (their context is their own, on their own "
                                  f"windows; their cost, {cost}, is in the session's):")]
    for event in subagents[-10:]:
        lines.append(Content.assemble(
            f"  {event.number:>3} ", literal(event.name[:24], "$accent"), " ", literal(event.description[:40]),
            (f"  {event.outcome} · {plural(event.requests, 'request')} · peak {human_tokens(event.peak_tokens)}/"
             f"{human_tokens(event.window)} · {_cost(event)}", "$text-muted")))
    if len(subagents) > 10:
        lines.append(Content.styled(f"  … and {len(subagents) - 10} earlier (the event log lists them all)",
                                    "$text-muted"))
    return lines
