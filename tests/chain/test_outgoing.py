"""The history as sent (tui/chain/outgoing.py) and which usage figures are believed (usage_sanity.py)."""

from __future__ import annotations

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.usage import RequestUsage

from tui.agent.session.history_seal import seal
from tui.chain.outgoing import CANCELLED_TURN_NOTE, EMPTY_ANSWER_NOTE, FAILED_TURN_NOTE, outgoing_messages
from tui.chain.usage_sanity import MAX_BELIEVABLE_TOKENS, unbelievable_usage


def test_nothing_to_fix_is_the_same_list() -> None:
    messages = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])]
    assert outgoing_messages(messages) is messages


def test_whitespace_text_is_left_out_of_a_copy_and_the_record_is_untouched() -> None:
    call = ToolCallPart("ls", {"path": "."}, tool_call_id="c1")
    response = ModelResponse(parts=[TextPart("\n\n"), call, TextPart(" \t")])
    alone = ModelResponse(parts=[TextPart("   ")])
    messages = [ModelRequest(parts=[UserPromptPart("hi")]), response, alone]
    sent = outgoing_messages(messages)
    assert sent is not messages and sent[0] is messages[0]
    assert sent[1].parts == [call]
    assert sent[2].parts == [TextPart(EMPTY_ANSWER_NOTE)]
    assert response.parts[0] == TextPart("\n\n") and alone.parts == [TextPart("   ")]


def test_a_failed_turn_is_sent_as_a_neutral_line() -> None:
    failed = [ModelRequest(parts=[UserPromptPart("first")])]
    failed += seal(failed, "ModelHTTPError: status_code: 500, body: {'secret': 'internal stack trace'}")
    cancelled = [ModelRequest(parts=[UserPromptPart("second")])]
    cancelled += seal(cancelled, "cancelled")
    messages = [*failed, *cancelled]
    sent = outgoing_messages(messages)
    assert [part.content for part in sent[1].parts] == [FAILED_TURN_NOTE]
    assert [part.content for part in sent[3].parts] == [CANCELLED_TURN_NOTE]
    assert "internal stack trace" in messages[1].parts[0].content, "the record keeps the reason for the user"
    assert outgoing_messages(sent) is sent, "an already neutral note is not copied again"


def test_usage_beyond_reason() -> None:
    assert unbelievable_usage(RequestUsage(input_tokens=150_000, output_tokens=2_000), window=200_000) is None
    assert unbelievable_usage(RequestUsage(input_tokens=10**12)) is not None
    assert unbelievable_usage(RequestUsage(output_tokens=MAX_BELIEVABLE_TOKENS + 1)) is not None
    assert unbelievable_usage(RequestUsage(input_tokens=-5)) is not None
    over = unbelievable_usage(RequestUsage(input_tokens=450_000), window=200_000)
    assert over is not None and "context window" in over
    assert unbelievable_usage(RequestUsage(input_tokens=450_000)) is None, "without a window, only the bound"
