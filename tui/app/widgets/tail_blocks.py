"""A session's last messages as chat blocks, straight from their raw JSON (no pydantic-ai).

While ``deep-tui --resume`` opens the session in the background, the chat shows these blocks in its
first frame; once the session is open, :meth:`ChatView.show_session` replaces them with the same
blocks built from the validated messages (:mod:`tui.app.widgets.history_blocks`). Both use the same
widgets (an answer's Markdown is only parsed sooner here: :class:`TailAnswer`), and this module follows
``blocks_for`` part by part, so the swap changes nothing visible. Only a screenful is drawn
(:func:`screenful_start`).

Every string here came from a file: it goes through :func:`tui.text.terminal_text.visible`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from rich.cells import cell_len
from textual.widgets import Markdown

from tui.app.widgets.answer_block import AnswerSegment, AssistantBlock
from tui.app.widgets.chat_blocks import (
    CompactionDivider,
    DividerInfo,
    ToolBlock,
    cut_short_mark,
    prompt_blocks,
    prompt_preview,
    user_command_blocks,
)
from tui.app.widgets.thinking_block import ThinkingBlock
from tui.base.metadata_keys import EVICTED_PATH_KEY, USER_COMMAND_KEY, saved_chars, summary_info
from tui.text.attachment_text import (
    attachment_descriptions,
    attachment_label,
    human_bytes,
    without_attachments,
    without_image_content,
)
from tui.text.terminal_text import visible
from tui.text.user_command_text import command_metadata, output_chars

if TYPE_CHECKING:
    from textual import events
    from textual.app import ComposeResult
    from textual.widget import Widget

    from tui.store.session_tail import Record, SessionTail

ERROR_OUTCOMES = ("failed", "retried")  # pydantic_ai.messages.ERROR_OUTCOMES


class TailAnswerSegment(AnswerSegment):
    """A recorded answer's Markdown with its blocks built in :meth:`compose`: mounted with the rest of the
    first frame, where Textual's :class:`Markdown` parses in a thread once mounted and mounts its blocks
    after that. The same parser and the same blocks."""

    def compose(self) -> ComposeResult:
        text = self._initial_markdown or ""
        self._initial_markdown = None
        self._markdown = text
        yield from self._parse_markdown(_parser().parse(text))

    def on_mount(self, event: events.Mount) -> None:
        # Handlers run from this class up; the default prevented, Markdown's (parse again, replace the
        # blocks) does not run.
        event.prevent_default()
        self.post_message(Markdown.TableOfContentsUpdated(self, self.table_of_contents).set_sender(self))


PARSES_IN_COMPOSE = hasattr(Markdown, "_parse_markdown")
"""The Textual internals :class:`TailAnswerSegment` builds on are there (Textual 8.2); without them a tail
answer is an ordinary segment, parsed after mounting: a moment later on screen, never a crash."""


class TailAnswer(AssistantBlock):
    """A recorded answer drawn in the first frame (see :class:`TailAnswerSegment`)."""

    def compose(self) -> ComposeResult:
        segment = TailAnswerSegment(self.received)
        if PARSES_IN_COMPOSE and hasattr(segment, "_initial_markdown") and hasattr(segment, "_markdown"):
            yield segment
            if self.cut_short:
                yield cut_short_mark()
        else:
            yield from super().compose()


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("gfm-like")  # what Markdown.update uses without a parser factory


def tail_blocks(tail: SessionTail, *, screen: tuple[int, int] | None = None) -> list[Widget]:
    """One block per prompt, answer, tool call (with its result) and summary of ``tail.records``.

    With ``screen`` (columns, rows), only the newest records that certainly fill that many rows are
    drawn: the first frame needs no more, and every block less makes it come sooner (the whole page
    replaces them once the session is open)."""
    skipped = 0 if screen is None else screenful_start(tail.records, *screen)
    blocks: list[Widget] = []
    tools: dict[str, ToolBlock] = {}
    for offset, record in enumerate(tail.records[skipped:], start=skipped):
        index = None if tail.first_index is None else tail.first_index + offset
        parts = [part for part in record.get("parts", []) if isinstance(part, dict)]
        if record.get("kind") == "request":
            summary = summary_info(record)
            if summary is not None:
                divider = CompactionDivider(_divider_info(parts, summary))
                divider.message_index = index
                blocks.append(divider)
                continue
            metadata = record.get("metadata")
            recorded_command = metadata.get(USER_COMMAND_KEY) if isinstance(metadata, dict) else None
            command = command_metadata(recorded_command)
            if command is not None:
                name, status, saved_path = command
                context = next((prompt_text(part.get("content")) for part in parts
                                if part.get("part_kind") == "user-prompt"), "")
                blocks.extend(user_command_blocks(name, context, status, saved_path, index,
                                                  output_chars(recorded_command, context, status)))
                continue
            for part in parts:
                kind = part.get("part_kind")
                if kind == "user-prompt":
                    content = part.get("content")
                    blocks.extend(prompt_blocks(typed_text(content), attachment_descriptions(content), index))
                elif kind in ("tool-return", "retry-prompt"):
                    block = tools.get(str(part.get("tool_call_id")))
                    if block is not None:
                        _set_result(block, part)
        else:
            cut = _cut_short_part(record, parts)
            for number, part in enumerate(parts):
                kind = part.get("part_kind")
                content = part.get("content")
                if kind == "text" and isinstance(content, str) and content.strip():
                    blocks.append(TailAnswer(visible(content), message_index=index, cut_short=number == cut))
                elif kind == "thinking" and isinstance(content, str) and content.strip():
                    blocks.append(ThinkingBlock(visible(content), cut_short=number == cut))
                elif kind == "tool-call":
                    call_id = str(part.get("tool_call_id"))
                    block = ToolBlock(call_id, visible(str(part.get("tool_name"))), visible(_args_json(part.get("args"))))
                    block.message_index = index
                    tools[call_id] = block
                    blocks.append(block)
    return blocks


def _cut_short_part(record: Record, parts: list[Record]) -> int | None:
    """As ``history_blocks.cut_short_part``: the text or thinking part an interrupted response ended with."""
    if record.get("state") != "interrupted":
        return None
    for number in range(len(parts) - 1, -1, -1):
        kind, content = parts[number].get("part_kind"), parts[number].get("content")
        if kind in ("text", "thinking") and isinstance(content, str) and content.strip():
            return number
        if kind == "tool-call":
            return None  # the call was cut (its result says so), not the text before it
    return None


def screenful_start(records: list[Record], columns: int, rows: int) -> int:
    """The first of the newest ``records`` whose blocks take at least ``rows`` rows at ``columns`` (or fewer)
    columns; 0 when all of them take fewer."""
    filled = 0
    for start in range(len(records) - 1, -1, -1):
        filled += least_rows(records[start], columns)
        if filled >= rows:
            return start
    return 0


def least_rows(record: Record, columns: int) -> int:
    """A lower bound of the rows the blocks of ``record`` take in a chat at most ``columns`` wide."""
    parts = [part for part in record.get("parts", []) if isinstance(part, dict)]
    if record.get("kind") == "request":
        if summary_info(record) is not None:
            return 1
        metadata = record.get("metadata")
        if isinstance(metadata, dict) and command_metadata(metadata.get(USER_COMMAND_KEY)) is not None:
            return USER_BLOCK_GAP + 1 + 1  # the "!command" line and its output's collapsed block
        return sum(USER_BLOCK_GAP + _prompt_rows(typed_text(part.get("content")), columns - USER_PADDING)
                   + (1 if attachment_descriptions(part.get("content")) else 0)  # the "attached: …" line
                   for part in parts if part.get("part_kind") == "user-prompt")
    rows = 0
    for part in parts:
        kind, content = part.get("part_kind"), part.get("content")
        if kind == "text" and isinstance(content, str) and content.strip():
            rows += _markdown_rows(content)
        elif kind == "tool-call" or (kind == "thinking" and isinstance(content, str) and content.strip()):
            rows += 1  # a collapsed block's title
    return rows


USER_LABEL = "you  "
"""What a prompt's block shows before its text (:class:`~tui.app.widgets.chat_blocks.UserBlock`)."""
USER_BLOCK_GAP = 1
USER_PADDING = 2
"""``.user-block`` in deep_tui.tcss: a row of margin above it, a column of padding each side."""


def _prompt_rows(text: str, columns: int) -> int:
    """Rows of a prompt's block: a long one shows its first lines and one line more (:func:`prompt_preview`)."""
    shown, hidden = prompt_preview(visible(text))
    return _plain_rows(USER_LABEL + shown, columns) + (1 if hidden else 0)


def _plain_rows(text: str, columns: int) -> int:
    """Rows of ``text`` drawn as is, wrapped at ``columns``."""
    return sum(max(1, -(-cell_len(line) // max(columns, 1))) for line in visible(text).split("\n"))


_HEADING = re.compile(r"#{1,6}\s")
_BULLET = re.compile(r"[-*+]\s")
"""A heading or a bullet starts a block of its own even right below a paragraph line."""
_LIST_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])\s")
_FENCE = re.compile(r"(`{3,}|~{3,})")
_NOT_SHOWN = re.compile(r"<|\[[^\]]*\]:")
"""HTML and link reference definitions: blocks that draw nothing."""


def _markdown_rows(text: str) -> int:
    """At least one row per paragraph, list item or heading, one per line of a code fence (never wrapped),
    and the row of margin below a heading or a paragraph outside lists when another block follows.
    Markdown can join lines (a paragraph's) and hide text (link targets, HTML), so nothing else is counted."""
    rows, fence, after_blank, gap_below, hidden = 0, "", True, False, False
    for line in text.splitlines():
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            else:
                rows += 1
        elif (after_blank and _NOT_SHOWN.match(stripped)) or (hidden and stripped):
            hidden = True  # up to the next blank line
        elif opening := _FENCE.match(stripped):
            fence = opening.group(1)
            rows += gap_below
            gap_below = False
        elif stripped and (after_blank or _HEADING.match(stripped) or _BULLET.match(stripped)):
            rows += 1 + gap_below
            gap_below = bool(_HEADING.match(stripped)) or (line == stripped and not _LIST_ITEM.match(stripped))
        after_blank = not stripped and not fence
        hidden = hidden and bool(stripped)
    return max(rows, 1)


def prompt_text(content: object) -> str:
    """A recorded ``user-prompt`` content as :func:`tui.text.message_text.prompt_text` shows it."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = (_content_item_text(item) for item in without_image_content(content))
    return " ".join(text for text in texts if text)


def typed_text(content: object) -> str:
    """A recorded ``user-prompt`` content as :func:`tui.text.message_text.typed_text` gives it: without the files
    attached with ``@path``."""
    if isinstance(content, list):
        return prompt_text(without_attachments(content))
    return prompt_text(content)


def _content_item_text(item: object) -> str:
    if isinstance(item, str):
        return attachment_label(item) or item
    if not isinstance(item, dict):
        return ""
    kind = str(item.get("kind", ""))
    if kind == "text-content":
        return str(item.get("content", ""))
    if kind == "cache-point":
        return ""
    if kind.endswith("-url"):
        return f"[{kind.removesuffix('-url')}: {item.get('url')}]"
    if kind == "binary":
        return f"[{item.get('media_type')}, {_size(_decoded_length(item.get('data')))}]"
    if kind == "uploaded-file":
        return f"[uploaded file: {item.get('file_id')}]"
    return f"[{kind or 'content'}]"


def _decoded_length(data: object) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _size(count: int) -> str:
    return human_bytes(count, kb_decimals=0)


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _args_json(args: object) -> str:
    """A call's arguments as ``ToolCallPart.args_as_json_str()`` gives them (compact JSON of an object)."""
    if args is None:
        return "{}"
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except ValueError:
            return _compact_json({"INVALID_JSON": args})
        return _compact_json(parsed if isinstance(parsed, dict) else {"INVALID_JSON": args})
    return _compact_json(args)


def _set_result(block: ToolBlock, part: Record) -> None:
    """As ``ToolReturnPart.model_response_str()``: text as is, other values as compact JSON, and an error
    (a failed call, or a retry — pydantic-ai reads a recorded ``retry-prompt`` as a retried return) wrapped
    as ``{"error": …}``."""
    content = part.get("content")
    metadata = part.get("metadata") if isinstance(part.get("metadata"), dict) else {}
    is_error = part.get("part_kind") == "retry-prompt" or part.get("outcome") in ERROR_OUTCOMES
    if is_error:
        text = _compact_json({"error": content if content is not None else ""})
    else:
        text = "" if content is None else content if isinstance(content, str) else _compact_json(content)
    path = metadata.get(EVICTED_PATH_KEY) if metadata else None
    block.set_result(visible(text), len(text), saved_chars=saved_chars(metadata or {}),
                     evicted_path=visible(path) if isinstance(path, str) else None,
                     is_error=is_error)


def _divider_info(parts: list[Record], info: dict[str, Any]) -> DividerInfo:
    """As ``history_blocks.divider_info`` without a compaction event (a past one carries none on resume)."""
    summary = next((str(part.get("content") or "") for part in parts if part.get("part_kind") == "compaction"), "")
    replaced = info.get("replaced")
    replaced = replaced if isinstance(replaced, int) else 0
    kept_from = info.get("kept_from")
    start = max(0, kept_from - replaced) if isinstance(kept_from, int) else None
    retention = info.get("retention")
    focus = info.get("focus")
    return DividerInfo(
        strategy=visible(str(info.get("strategy", "summary"))),
        replaced=replaced,
        tokens_before=None,
        tokens_after=None,
        retention=float(retention) if isinstance(retention, (int, float)) else None,
        focus=visible(focus) if isinstance(focus, str) else None,
        summary=visible(summary),
        replaced_range=(start, kept_from) if start is not None and isinstance(kept_from, int) and kept_from > start
        else None,
    )
