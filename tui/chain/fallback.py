"""The pre-flight fallback: drop the oldest messages behind a marker until the request fits."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage

from tui.chain.cut_points import is_safe_cut
from tui.chain.estimate import TokenEstimator
from tui.chain.summary_message import make_summary_message, summary_text
from tui.chain.transcript import cap, render_transcript

MARKER_PREVIEW_CHARS = 1_200


def _marker(dropped: Sequence[ModelMessage], *, bare: bool = False) -> str:
    """What replaces ``dropped``: a notice, the earlier summary and the start of the span, condensed; ``bare``:
    the notice alone (a tiny window where even the condensed text does not fit)."""
    earlier = next((text for text in (summary_text(m) for m in dropped) if text), None)
    lines = [
        f"[{len(dropped)} earlier messages were removed to fit the context window. Nothing is lost: they are in "
        "this session's messages.json — use search_conversation_history to find details.]",
    ]
    if bare:
        return lines[0]
    if earlier:
        lines.append("Earlier summary (condensed):\n" + cap(earlier, MARKER_PREVIEW_CHARS))
    lines.append("Start of the removed span:\n" + cap(render_transcript(dropped[:6], tool_output_cap=200),
                                                       MARKER_PREVIEW_CHARS))
    return "\n".join(lines)


def fallback_compact(messages: Sequence[ModelMessage], *, target_tokens: int,
                     estimator: TokenEstimator) -> tuple[list[ModelMessage], int] | None:
    """``(marker + kept tail, number replaced)`` fitting ``target_tokens``, or ``None`` if even the
    smallest safe tail does not fit. The condensed marker is preferred; the bare notice is used only when no
    cut fits with it."""
    suffix_tokens = [0] * (len(messages) + 1)
    for index in range(len(messages) - 1, -1, -1):
        suffix_tokens[index] = suffix_tokens[index + 1] + estimator.message_tokens(messages[index])
    for bare in (False, True):
        for cut in range(1, len(messages)):
            if not is_safe_cut(messages, cut) or suffix_tokens[cut] > target_tokens:
                continue
            marker = make_summary_message(_marker(messages[:cut], bare=bare), strategy="fallback", kept_from=None,
                                          replaced=cut)
            if estimator.message_tokens(marker) + suffix_tokens[cut] <= target_tokens:
                return [marker, *messages[cut:]], cut
    return None
