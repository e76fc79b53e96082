"""Recorded messages → chat blocks (used when a session opens and when earlier pages load).

Recorded text is hostile (model output, file contents): what goes into a block here passes through
:func:`visible`, as the live turn's events do in the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import (
    CompactionDivider,
    DividerInfo,
    NoticeBlock,
    ToolBlock,
    prompt_blocks,
    user_command_blocks,
)
from tui.app.widgets.thinking_block import ThinkingBlock
from tui.base.metadata_keys import EVICTED_PATH_KEY, USER_COMMAND_KEY, saved_chars
from tui.chain.event_text import failed_compaction_line
from tui.chain.events import RETENTION_TARGET, CompactionFailed, CompactionFinished
from tui.chain.summary_message import summary_info
from tui.text.attachment_text import attached_line, attachment_descriptions
from tui.text.message_text import prompt_text, typed_text
from tui.text.terminal_text import visible, visible_json
from tui.text.user_command_text import command_metadata, output_chars

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.widget import Widget


def _prompt_text(part: UserPromptPart) -> str:
    return prompt_text(part.content)


def divider_info(message: ModelRequest, index: int, finished: dict[int, CompactionFinished]) -> DividerInfo:
    info = summary_info(message) or {}
    summary = next((p.content or "" for p in message.parts if isinstance(p, CompactionPart)), "")
    replaced = int(info.get("replaced") or 0)
    kept_from = info.get("kept_from")
    event = finished.get(index)
    start = max(0, kept_from - replaced) if isinstance(kept_from, int) else None
    if event is not None:
        missing_count, missing = (event.missing, event.missing_identifiers) if event.low_retention else (0, ())
    else:  # no event (events.jsonl lost or not written): the summary's own record of its retention
        retention, recorded = info.get("retention"), info.get("missing")
        low = isinstance(retention, (int, float)) and retention < RETENTION_TARGET
        missing_count, missing = (recorded if low and isinstance(recorded, int) else 0), ()
    return DividerInfo(
        strategy=str(info.get("strategy", "summary")),
        replaced=event.messages_replaced if event else replaced,
        tokens_before=event.tokens_before if event else None,
        tokens_after=event.tokens_after if event else None,
        retention=event.retention_score if event else info.get("retention"),
        focus=event.focus if event else info.get("focus"),
        summary=visible(summary),
        replaced_range=(start, kept_from) if start is not None and isinstance(kept_from, int) and kept_from > start
        else None,
        missing_count=missing_count,
        missing=missing,
    )


def cut_short_part(response: ModelResponse) -> int | None:
    """The part an interrupted response was cut in, when it is text or thinking shown in the chat (its block is
    marked); ``None`` for a complete response, or one cut in a tool call (whose sealed result says so)."""
    if response.state != "interrupted":
        return None
    for number in range(len(response.parts) - 1, -1, -1):
        part = response.parts[number]
        if isinstance(part, (TextPart, ThinkingPart)) and part.content.strip():
            return number
        if isinstance(part, ToolCallPart):
            return None
    return None


def _failed_notices(attempts: Sequence[CompactionFailed]) -> list[Widget]:
    return [NoticeBlock(failed_compaction_line(event), tone="muted", classes="failed-compaction") for event in attempts]


def blocks_for(messages: Sequence[ModelMessage], first_index: int, finished: dict[int, CompactionFinished],
               failed: dict[int, list[CompactionFailed]] | None = None, *, last_page: bool = False) -> list[Widget]:
    """One block per prompt, answer, tool call (with its result) and summary; a line for each compaction attempt
    in ``failed`` (by the message index it came before) where it happened — after the last message for
    ``last_page`` (the newest messages: an attempt made once they were all recorded)."""
    blocks: list[Widget] = []
    tools: dict[str, ToolBlock] = {}
    failed = failed or {}
    for offset, message in enumerate(messages):
        index = first_index + offset
        blocks.extend(_failed_notices(failed.get(index, ())))
        if isinstance(message, ModelRequest):
            if summary_info(message) is not None:
                divider = CompactionDivider(divider_info(message, index, finished))
                divider.message_index = index
                blocks.append(divider)
                continue
            recorded_command = (message.metadata or {}).get(USER_COMMAND_KEY)
            command = command_metadata(recorded_command)
            if command is not None:
                context = next((_prompt_text(p) for p in message.parts if isinstance(p, UserPromptPart)), "")
                name, status, saved_path = command
                blocks.extend(user_command_blocks(name, context, status, saved_path, index,
                                                  output_chars(recorded_command, context, status)))
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    blocks.extend(prompt_blocks(typed_text(part.content), attachment_descriptions(part.content), index))
                elif isinstance(part, (ToolReturnPart, RetryPromptPart)):
                    block = tools.get(part.tool_call_id)
                    if block is None:
                        continue
                    text = part.model_response_str() if isinstance(part, ToolReturnPart) else part.model_response()
                    metadata = part.metadata if isinstance(part, ToolReturnPart) and isinstance(part.metadata, dict) else {}
                    path = metadata.get(EVICTED_PATH_KEY) if metadata else None
                    block.set_result(visible(text), len(text), saved_chars=saved_chars(metadata),
                                     evicted_path=visible(path) if isinstance(path, str) else None,
                                     is_error=isinstance(part, RetryPromptPart) or part.outcome in ERROR_OUTCOMES)
        elif isinstance(message, ModelResponse):
            cut = cut_short_part(message)
            for number, part in enumerate(message.parts):
                if isinstance(part, TextPart) and part.content.strip():
                    blocks.append(AssistantBlock(visible(part.content), message_index=index, cut_short=number == cut))
                elif isinstance(part, ThinkingPart) and part.content.strip():
                    blocks.append(ThinkingBlock(visible(part.content), cut_short=number == cut))
                elif isinstance(part, ToolCallPart):
                    block = ToolBlock(visible(part.tool_call_id), visible(part.tool_name), visible_json(part.args_as_json_str()))
                    block.message_index = index
                    tools[part.tool_call_id] = block
                    blocks.append(block)
    if last_page:
        end = first_index + len(messages)
        blocks.extend(_failed_notices([event for index, attempts in failed.items() if index >= end
                                       for event in attempts]))
    return blocks


def original_lines(messages: Sequence[ModelMessage]) -> list[tuple[str, str]]:
    """Replaced messages as (label, text) lines for an expanded divider."""
    lines: list[tuple[str, str]] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                lines.append(("you", typed_text(part.content)))
                if attached := attachment_descriptions(part.content):
                    lines.append(("", attached_line(attached)))
            elif isinstance(part, TextPart) and part.content.strip():
                lines.append(("agent", part.content))
            elif isinstance(part, ToolCallPart):
                lines.append(("tool", f"{part.tool_name}({visible_json(part.args_as_json_str())[:200]})"))
            elif isinstance(part, ToolReturnPart):
                text = part.model_response_str()
                lines.append(("result", text[:300] + ("…" if len(text) > 300 else "")))
            elif isinstance(part, CompactionPart):
                lines.append(("summary", (part.content or "")[:300]))
    return lines
