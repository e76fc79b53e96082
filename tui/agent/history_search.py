"""search_conversation_history: find earlier turns in the session's full messages.json."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from pydantic_ai import FunctionToolset
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.agent.tool_errors import refuse


def _labelled_texts(index: int, message: ModelMessage) -> Iterator[tuple[str, str]]:
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                content = part.content if isinstance(part.content, str) else " ".join(
                    item for item in part.content if isinstance(item, str))
                yield f"User (message {index})", content
            elif isinstance(part, ToolReturnPart):
                yield f"Tool {part.tool_name} (message {index})", part.model_response_str()
            elif isinstance(part, RetryPromptPart):
                yield f"Tool {part.tool_name or 'retry'} (message {index})", part.model_response()
            elif isinstance(part, CompactionPart) and part.content:
                yield f"Summary (message {index})", part.content
    elif isinstance(message, ModelResponse):
        for part in message.parts:
            if isinstance(part, TextPart):
                yield f"Assistant (message {index})", part.content
            elif isinstance(part, ToolCallPart):
                yield f"Assistant (message {index})", f"called {part.tool_name}({part.args_as_json_str()})"


def search_history(messages: Sequence[ModelMessage], query: str, *, max_results: int = 10,
                   context_lines: int = 5) -> str:
    """Case-insensitive search; at most ``max_results`` excerpts, newest first, with context lines."""
    needle = query.strip().lower()
    if not needle:
        return "the query is empty"
    excerpts: list[str] = []
    for index in range(len(messages) - 1, -1, -1):
        for label, text in _labelled_texts(index, messages[index]):
            lines = text.splitlines() or [text]
            for number, line in enumerate(lines):
                if needle not in line.lower():
                    continue
                start, stop = max(0, number - context_lines), min(len(lines), number + context_lines + 1)
                excerpts.append(f"--- {label}, line {number + 1}\n" + "\n".join(lines[start:stop]))
                break  # one excerpt per part
            if len(excerpts) >= max_results:
                return "\n".join(excerpts) + f"\n(stopped at {max_results} matches; refine the query for more)"
    return "\n".join(excerpts) if excerpts else f"no matches for {query!r} in this session's history"


def history_toolset(load_messages: Callable[[], Sequence[ModelMessage]]) -> FunctionToolset[None]:
    """The search tool over everything recorded, including turns a summary replaced."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def search_conversation_history(query: str) -> str:
        """Search this session's whole recorded conversation (including summarized turns) for ``query``."""
        if not query.strip():
            raise refuse("query is empty")
        return search_history(load_messages(), query)

    return toolset
