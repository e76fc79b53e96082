"""pydantic-ai's stream events → the display-only :data:`~tui.agent.turn_events.TurnEvent` stream.

Everything here is shown, never recorded (the recorded messages keep the model's bytes), so every string
is made terminal-safe on the way (:mod:`tui.text.terminal_text`).
"""

from __future__ import annotations

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolReturnPart,
)

from tui.agent.shell.execute_tool import CommandEnded, CommandOutput
from tui.agent.subagents.progress import SubagentProgress
from tui.agent.turn_events import (
    SubagentActivity,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    ToolOutputEnded,
    TurnEvent,
)
from tui.base.metadata_keys import EVICTED_PATH_KEY, saved_chars
from tui.text.terminal_text import visible, visible_json

PREVIEW_CHARS = 2_000
"""How much of a tool's result a :class:`ToolCallFinished` carries for display."""


def translate(event: AgentStreamEvent) -> TurnEvent | None:
    """The display event for ``event``, or ``None`` when nothing is shown for it."""
    if isinstance(event, PartStartEvent):
        if isinstance(event.part, TextPart) and event.part.content:
            return TextDelta(shown(event.part.content))
        if isinstance(event.part, ThinkingPart) and event.part.content:
            return ThinkingDelta(shown(event.part.content))
    elif isinstance(event, PartDeltaEvent):
        if isinstance(event.delta, TextPartDelta) and event.delta.content_delta:
            return TextDelta(shown(event.delta.content_delta))
        if isinstance(event.delta, ThinkingPartDelta) and event.delta.content_delta:
            return ThinkingDelta(shown(event.delta.content_delta))
    elif isinstance(event, FunctionToolCallEvent):
        return ToolCallStarted(visible(event.part.tool_call_id), visible(event.part.tool_name),
                               visible_json(event.part.args_as_json_str()))
    elif isinstance(event, CommandOutput):
        return ToolOutputDelta(visible(event.tool_call_id or ""), event.text)
    elif isinstance(event, CommandEnded):
        return ToolOutputEnded(visible(event.tool_call_id or ""), visible(event.status))
    elif isinstance(event, SubagentProgress):
        return SubagentActivity(visible(event.tool_call_id or ""), event.number, visible(event.agent_type),
                                visible(event.description), event.state, visible(event.tool) if event.tool else None,
                                event.tokens, event.window, event.requests, event.cost_usd, visible(event.history),
                                visible(event.answer))
    elif isinstance(event, FunctionToolResultEvent):
        part = event.part
        if isinstance(part, ToolReturnPart):
            text = part.model_response_str()
            metadata = part.metadata if isinstance(part.metadata, dict) else {}
            return ToolCallFinished(visible(part.tool_call_id), visible(part.tool_name),
                                    visible(text[:PREVIEW_CHARS]), len(text),
                                    evicted_path=metadata.get(EVICTED_PATH_KEY), saved_chars=saved_chars(metadata),
                                    is_error=part.outcome in ERROR_OUTCOMES,
                                    denied=part.outcome == "denied", last_line=_last_line(text))
        if isinstance(part, RetryPromptPart):
            text = part.model_response()
            return ToolCallFinished(visible(part.tool_call_id), visible(part.tool_name or "tool"),
                                    visible(text[:PREVIEW_CHARS]), len(text), is_error=True)
    return None


def _last_line(text: str) -> str:
    stripped = text.rstrip("\n")
    return visible(stripped[stripped.rfind("\n") + 1:][:PREVIEW_CHARS])


def shown(delta: str) -> str:
    """A streamed piece of text made terminal-safe (display only: the recorded message keeps its bytes).

    A carriage return ending the piece is dropped rather than shown as a line break: it is almost always
    the first half of a CRLF whose newline starts the next piece.
    """
    return visible(delta[:-1] if delta.endswith("\r") else delta)
