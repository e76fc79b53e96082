"""Tier 2 (reversible): old file-write arguments become pointers, old tool outputs become previews, the images of
old prompts become one-line placeholders naming their saved copy; as a last resort, oversized arguments of any
call (even the running turn's) become a preview and a saved copy, and the running turn's images placeholders.

The result has the input's length and order, unchanged messages are the
same objects, and a part rewritten once is never rewritten again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolCallPart, ToolReturnPart, UserPromptPart

from tui.base.metadata_keys import ELIDED_ARG, EVICTED_PATH_KEY, MASKED_KEY, SAVED_LINES_KEY
from tui.chain.estimate import TokenEstimator, text_tokens
from tui.chain.image_placeholders import has_images, placeholder_prompt
from tui.chain.safe_names import unique_output_name, write_new_file

MIN_MASKABLE_TOKENS = 50
OVERSIZED_ARGS_TOKENS = 2_000
"""Arguments this large on a call of any other tool (a 10 MB path) are elided by the pre-flight's last resort."""
DEFAULT_PREVIEW_CHARS = 600


@dataclass
class ToolCompactionResult:
    messages: list[ModelMessage]
    tokens_before: int
    tokens_after: int
    masked_args: int = 0
    pointered_returns: int = 0
    placeholder_images: int = 0
    """Images replaced by their placeholder (see :mod:`tui.chain.image_placeholders`)."""
    pending: _Bundle | None = None
    """The copies the pointers refer to; written by :meth:`save` only if the rewrite is applied."""

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def save(self) -> list[str]:
        """Write the copies the pointers name (raises ``OSError``); returns the files created."""
        written = self.pending.write() if self.pending is not None else None
        return [written] if written is not None else []


def _current_turn_start(messages: Sequence[ModelMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return index
    return 0


def _output_tokens(message: ModelMessage) -> int:
    if not isinstance(message, ModelRequest):
        return 0
    return sum(text_tokens(p.model_response_str()) for p in message.parts if isinstance(p, ToolReturnPart))


def _protected_from(messages: Sequence[ModelMessage], protect_recent_tokens: int, *,
                    include_current_turn: bool = False, reach_current_turn: bool = False) -> int:
    """Index from which tool output is protected: the current turn and the newest output before it up to the
    budget; ``reach_current_turn``: only the request about to be sent (outputs the model has not seen yet) and
    the newest output up to the budget, counted from the end; ``include_current_turn``: the newest output up to
    the budget, nothing else."""
    budget = protect_recent_tokens
    if include_current_turn:
        boundary = len(messages)
    elif reach_current_turn and messages:
        boundary = len(messages) - 1
        budget = max(0, budget - _output_tokens(messages[-1]))
    else:
        boundary = _current_turn_start(messages)
    for index in range(boundary - 1, -1, -1):
        output = _output_tokens(messages[index])
        if not output:
            continue
        if output > budget:
            break
        budget -= output
        boundary = index
    return boundary


@dataclass
class _Bundle:
    """Tier-2 copies of one compaction, written together to one file (one file open, not hundreds)."""

    directory: Path
    chunks: list[str] = field(default_factory=list)
    line_count: int = 0
    path: Path | None = None

    def add(self, part: ToolReturnPart | ToolCallPart, text: str) -> tuple[str, int, int]:
        """Queue ``text``; returns (path, offset, lines) for ``read_file``."""
        if self.path is None:
            # Not resolved: a planted link in place of the directory is refused when written, never followed.
            self.path = Path(os.path.abspath(self.directory)) / unique_output_name(f"tier2-{part.tool_call_id}", ".txt")
        body = text if text.endswith("\n") else text + "\n"
        lines = body.count("\n")  # as read_file numbers them: only "\n" ends a line (tui/agent/tools/file_reading.py)
        offset = self.line_count + 1
        self.chunks.append(f"=== {part.tool_name} {part.tool_call_id} ({lines} lines) ===\n{body}")
        self.line_count += 1 + lines
        return str(self.path), offset, lines

    def write(self) -> str | None:
        if self.path is None:
            return None
        write_new_file(self.path, "".join(self.chunks))
        return str(self.path)


def _pointer_text(part: ToolReturnPart, content: str, location: str, preview_chars: int) -> str:
    preview = content if len(content) <= preview_chars else content[:preview_chars] + "…"
    return (f"[older output of {part.tool_name} compacted to save context ({len(content):,} characters); "
            f"{location}]\npreview:\n{preview}")


def _mask_return(part: ToolReturnPart, bundle: _Bundle, preview_chars: int) -> ToolReturnPart:
    metadata: dict[str, Any] = dict(part.metadata) if isinstance(part.metadata, dict) else {}
    evicted = metadata.get(EVICTED_PATH_KEY)
    content = part.model_response_str()
    if isinstance(evicted, str):
        location = f"the whole output is saved at {evicted}: read_file(path={evicted!r}, offset=0, limit=400)"
    else:
        text = json.dumps(part.content, ensure_ascii=False, indent=2, default=str) \
            if isinstance(part.content, (dict, list)) else content
        path, offset, lines = bundle.add(part, text)
        location = f"saved at {path}: read_file(path={path!r}, offset={offset}, limit={lines})"
        metadata[EVICTED_PATH_KEY] = path
        metadata[SAVED_LINES_KEY] = [offset, lines]
    metadata[MASKED_KEY] = True
    return replace(part, content=_pointer_text(part, content, location, preview_chars), metadata=metadata)


PREVIEW_MARK = "]\npreview:\n"


def _shorten_pointer(part: ToolReturnPart, preview_chars: int) -> ToolReturnPart | None:
    """An already compacted output with its preview cut to ``preview_chars`` (``None``: already that short).
    The pointer line is kept as it is: it still names the saved copy."""
    content = part.model_response_str()
    head, mark, preview = content.partition(PREVIEW_MARK)
    if not mark or len(preview) <= preview_chars + 1:
        return None
    shorter = preview[:preview_chars] + "…" if preview_chars else ""
    return replace(part, content=f"{head}{mark}{shorter}")


def _elide_args(part: ToolCallPart, preview_chars: int, bundle: _Bundle | None = None) -> ToolCallPart:
    """The call with its bulky arguments replaced by a note: where the written file is, or — for a write that
    did not happen (denied, failed, interrupted; ``bundle`` given) — where a saved copy of the arguments is."""
    args = part.args_as_dict()
    path = args.get("path", "?")
    bulky = {key: value for key, value in args.items() if key != "path" and isinstance(value, str)}
    elided = sum(len(value) for value in bulky.values())
    first = next(iter(bulky.values()), "")
    if bundle is None:
        where = f"the result is on disk — read_file(path={path!r}) to see it"
    else:
        saved, offset, lines = bundle.add(part, part.args_as_json_str())
        where = (f"this write did not happen; the arguments as sent are saved at {saved}: "
                 f"read_file(path={saved!r}, offset={offset}, limit={lines})")
    new_args = {
        "path": path,
        ELIDED_ARG: True,
        "note": f"{elided:,} characters of {', '.join(bulky) or 'arguments'} elided to save context; {where}",
        "preview": first[: preview_chars // 3],
    }
    return replace(part, args=new_args)


def _elide_oversized_args(part: ToolCallPart, preview_chars: int, bundle: _Bundle) -> ToolCallPart:
    """A call of a tool that does not write files, with each long string argument cut to a preview and the
    call as sent saved: such arguments are a mistake the tool refused, but they must not stop the turn."""
    args = part.args_as_dict()
    keep = max(20, preview_chars // 3)
    elided = sum(len(value) for value in args.values() if isinstance(value, str) and len(value) > keep)
    saved, offset, lines = bundle.add(part, part.args_as_json_str())
    new_args: dict[str, Any] = {
        key: (value[:keep] + "…" if isinstance(value, str) and len(value) > keep else value)
        for key, value in args.items()
    }
    new_args[ELIDED_ARG] = True
    new_args["note"] = (f"{elided:,} characters of arguments elided to fit the context window; the call as sent "
                        f"is saved at {saved}: read_file(path={saved!r}, offset={offset}, limit={lines})")
    return replace(part, args=new_args)


def _applied_write_ids(messages: Sequence[ModelMessage], file_writing_tools: frozenset[str]) -> set[str]:
    """Calls whose result says the write happened: a denied, failed or interrupted write's arguments are the
    only copy of what it meant to write (the file does not have it), so they are pointed at a saved copy instead."""
    return {part.tool_call_id for message in messages if isinstance(message, ModelRequest) for part in message.parts
            if isinstance(part, ToolReturnPart) and part.tool_name in file_writing_tools and part.outcome == "success"}


def compact_tool_calls(messages: Sequence[ModelMessage], *, estimator: TokenEstimator, large_results_dir: Path,
                       protect_recent_tokens: int, file_writing_tools: frozenset[str],
                       preview_chars: int = DEFAULT_PREVIEW_CHARS, include_current_turn: bool = False,
                       reach_current_turn: bool = False) -> ToolCompactionResult:
    """Rewrite tool activity older than the protection window; see the module docstring.

    ``file_writing_tools``: the names of the tools whose arguments hold what they wrote (``path`` and the text),
    as the agent's tool marks say (the chain knows no tool by name).

    By default the running turn is protected whole. ``reach_current_turn`` (before a lossy step: a summary or
    the pre-flight's fallback) protects only the request about to be sent and the newest output up to
    ``protect_recent_tokens``, so outputs of the running turn the model has already read become pointers too.
    ``include_current_turn`` (the pre-flight's last resort) rewrites the running turn's outputs too, and cuts
    the previews of outputs compacted before down to ``preview_chars``.

    Nothing is written here: the caller decides whether the rewrite is worth applying and then
    calls :meth:`ToolCompactionResult.save` (an ``OSError`` there means: keep the history as it was).
    """
    before = estimator.total(messages)
    protected_from = _protected_from(messages, protect_recent_tokens, include_current_turn=include_current_turn,
                                     reach_current_turn=reach_current_turn)
    result = ToolCompactionResult(list(messages), before, before)
    bundle = _Bundle(large_results_dir)
    written = _applied_write_ids(messages, file_writing_tools)
    for index in range(protected_from):
        message = messages[index]
        new_parts: list[Any] = []
        changed = False
        for part in message.parts:
            if (include_current_turn and isinstance(part, ToolReturnPart) and isinstance(part.metadata, dict)
                    and part.metadata.get(MASKED_KEY)):
                shorter = _shorten_pointer(part, preview_chars)
                if shorter is not None:
                    part = shorter
                    result.pointered_returns += 1
                    changed = True
            elif (isinstance(part, ToolReturnPart) and not (isinstance(part.metadata, dict) and part.metadata.get(MASKED_KEY))
                    and text_tokens(part.model_response_str()) >= MIN_MASKABLE_TOKENS):
                part = _mask_return(part, bundle, preview_chars)
                result.pointered_returns += 1
                changed = True
            elif (isinstance(part, ToolCallPart) and part.tool_name in file_writing_tools
                  and not part.args_as_dict().get(ELIDED_ARG)
                  and text_tokens(part.args_as_json_str()) >= MIN_MASKABLE_TOKENS):
                part = _elide_args(part, preview_chars, None if part.tool_call_id in written else bundle)
                result.masked_args += 1
                changed = True
            elif isinstance(part, UserPromptPart) and has_images(part):
                part, replaced = placeholder_prompt(part)
                result.placeholder_images += replaced
                changed = True
            elif (include_current_turn and isinstance(part, ToolCallPart) and part.tool_name not in file_writing_tools
                  and text_tokens(part.args_as_json_str()) >= OVERSIZED_ARGS_TOKENS
                  and not part.args_as_dict().get(ELIDED_ARG)):
                part = _elide_oversized_args(part, preview_chars, bundle)
                result.masked_args += 1
                changed = True
            new_parts.append(part)
        if changed:
            result.messages[index] = _with_parts(message, new_parts)
    result.pending = bundle
    result.tokens_after = estimator.total(result.messages)
    return result


def _with_parts(message: ModelMessage, parts: list[Any]) -> ModelMessage:
    if isinstance(message, ModelRequest):
        return replace(message, parts=parts)
    return replace(message, parts=parts)
