"""Closing what a stopped turn left open, so the next prompt can always be sent.

A turn can stop anywhere: a provider error or a cancel before the answer (the history ends with a
request), a crash or a full disk while tools ran (a response's tool calls have no returns). Before
the next user prompt, :func:`seal` says which messages to append — once, recorded like any other:

- a tool call without a return gets an *interrupted* return (pydantic-ai refuses a new prompt after
  unanswered calls: "Cannot provide a new user prompt when the message history contains unprocessed
  tool calls");
- a history ending in a request gets a short response saying no answer came (not a ``!command`` the user
  ran: it is sent with the next prompt).

The second matters for recording too: two requests in a row are merged by pydantic-ai into a new
message object, which the recording ledger (keyed by object) would take for a new message and record
again — each failed prompt was re-recorded on every later failure (issue 8, item 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)

from tui.base.metadata_keys import REWIND_KEY, SEAL_METADATA_KEY, USER_COMMAND_KEY

"""Metadata on what :func:`seal` adds: ``{"reason": ...}``."""

INTERRUPTED_RETURN = "(interrupted: no result was recorded — the turn stopped before this tool call finished)"


def unanswered_calls(messages: Sequence[ModelMessage]) -> list[ToolCallPart]:
    """Tool calls of the last response that no later request answers."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if isinstance(message, ModelResponse):
            answered = {part.tool_call_id for later in messages[position + 1:] if isinstance(later, ModelRequest)
                        for part in later.parts if isinstance(part, (ToolReturnPart, RetryPromptPart))}
            return [part for part in message.parts
                    if isinstance(part, ToolCallPart) and part.tool_call_id not in answered]
    return []


def seal(messages: Sequence[ModelMessage], reason: str, *, returns: Mapping[str, str] | None = None,
         denied: Mapping[str, str] | None = None) -> list[ModelMessage]:
    """The messages to append so ``messages`` can take a new user prompt (empty when it already can).

    ``reason`` says why the turn stopped ("HTTP 500 from the provider", "cancelled"…); it is shown in
    the added response and kept in its metadata. ``returns``: what the model reads for some interrupted
    calls instead of :data:`INTERRUPTED_RETURN` (a cancelled command: its output so far), by call id.
    ``denied``: calls that never ran because the turn stopped while the user was asked about them (or about an
    earlier call of the same response), by call id: recorded as denied, with what the model reads.
    """
    returns = returns or {}
    denied = denied or {}
    added: list[ModelMessage] = []
    open_calls = unanswered_calls(messages)
    if open_calls:
        added.append(ModelRequest(
            parts=[_sealed_return(call, reason, returns, denied) for call in open_calls],
            metadata={SEAL_METADATA_KEY: {"reason": reason}},
        ))
    last = added[-1] if added else (messages[-1] if messages else None)
    if isinstance(last, ModelRequest) and not {USER_COMMAND_KEY, REWIND_KEY} & set(last.metadata or {}):
        # a !command the user ran, or a rewind's note, needs no answer: pydantic-ai sends it with the next prompt
        added.append(ModelResponse(parts=[TextPart(f"(no answer: {reason})")],
                                   metadata={SEAL_METADATA_KEY: {"reason": reason}}))
    return added


def _sealed_return(call: ToolCallPart, reason: str, returns: Mapping[str, str],
                   denied: Mapping[str, str]) -> ToolReturnPart:
    metadata = {SEAL_METADATA_KEY: {"reason": reason}}
    if call.tool_call_id in denied:
        return ToolReturnPart(call.tool_name, denied[call.tool_call_id], call.tool_call_id, outcome="denied",
                              metadata=metadata)
    return ToolReturnPart(call.tool_name, returns.get(call.tool_call_id, INTERRUPTED_RETURN), call.tool_call_id,
                          outcome="interrupted", metadata=metadata)
