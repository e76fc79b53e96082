"""The summary message: a ``ModelRequest`` holding a ``CompactionPart``, marked for resume and the app."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic_ai.messages import CompactionPart, ModelMessage, ModelRequest, SystemPromptPart

from tui.base.metadata_keys import SUMMARY_METADATA_KEY, summary_info

__all__ = ["make_summary_message", "summary_info", "summary_text", "with_kept_from"]


def make_summary_message(
    content: str,
    *,
    strategy: Literal["summary", "fallback"],
    kept_from: int | None,
    replaced: int,
    focus: str | None = None,
    retention: float | None = None,
    missing: int | None = None,
    extra: str | None = None,
) -> ModelRequest:
    """A summary of ``replaced`` messages; ``kept_from`` is the messages.json index of the first kept one;
    ``missing``: how many identifiers of the span the summary lacks (its retention check)."""
    info: dict[str, Any] = {"strategy": strategy, "kept_from": kept_from, "replaced": replaced}
    if focus:
        info["focus"] = focus
    if retention is not None:
        info["retention"] = round(retention, 3)
    if missing:
        info["missing"] = missing
    parts: list[CompactionPart | SystemPromptPart] = [
        CompactionPart(content=content, metadata={SUMMARY_METADATA_KEY: info})
    ]
    if extra:
        parts.append(SystemPromptPart(extra))
    return ModelRequest(parts=parts)


def summary_text(message: ModelMessage) -> str | None:
    """The summary's text, or ``None`` when ``message`` is not a deep-tui summary."""
    if summary_info(message) is None:
        return None
    assert isinstance(message, ModelRequest)
    return next((p.content or "" for p in message.parts if isinstance(p, CompactionPart)), None)


def with_kept_from(message: ModelRequest, kept_from: int) -> ModelRequest:
    """A copy of a summary message with its ``kept_from`` index set."""
    parts = []
    for part in message.parts:
        if isinstance(part, CompactionPart) and isinstance(part.metadata, dict):
            info = dict(part.metadata.get(SUMMARY_METADATA_KEY) or {})
            info["kept_from"] = kept_from
            part = replace(part, metadata={**part.metadata, SUMMARY_METADATA_KEY: info})
        parts.append(part)
    return replace(message, parts=parts)
