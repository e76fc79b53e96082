"""The outgoing copies a session keeps across requests (tui/chain/outgoing.py ``OutgoingCopies``) send byte for
byte what a full pass over the history sends (``outgoing_messages``), whatever happened to the history in
between: appends, an eviction, tier 2, a summary, image placeholders, a rewind, a message replaced in the middle,
the newest request growing after the hook, another model."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext

from tests.chain.support import SummarizerScript, history, make_harness, seed
from tests.support.images import png
from tui.agent.session.history_seal import seal
from tui.chain.estimate import TokenEstimator
from tui.chain.events import CompactionFinished
from tui.chain.eviction import build_preview
from tui.chain.outgoing import OutgoingCopies, outgoing_messages
from tui.chain.summary_message import make_summary_message
from tui.chain.tool_compaction import compact_tool_calls
from tui.text.attachment_text import attachment_item


def _prompt(number: int) -> ModelRequest:
    if number % 3:
        return ModelRequest(parts=[UserPromptPart(f"turn {number}: look at src/m{number}.py")])
    data = png(640, 480)
    item = attachment_item(f"shot{number}.png", len(data), "image", "(an image)", pixels=(640, 480),
                           media_type="image/png", saved=f"/data/large_tool_results/shot{number}.png")
    return ModelRequest(parts=[UserPromptPart([f"look at @shot{number}.png", item,
                                               BinaryContent(data, media_type="image/png")])])


def _turn(number: int) -> list[ModelMessage]:
    """A turn with all the outgoing pass fixes: an image (every third), a whitespace-only text next to a call, and
    (every fourth) a failed turn's note."""
    call = f"call-{number}"
    turn: list[ModelMessage] = [
        _prompt(number),
        ModelResponse(parts=[TextPart("\n\n"), ToolCallPart("read_file", {"path": f"src/m{number}.py"}, call)]),
        ModelRequest(parts=[ToolReturnPart("read_file", f"line {number}\n" * 300, call)]),
    ]
    if number % 4 == 3:
        return turn + seal(turn, f"ModelHTTPError: status_code: 500, body: turn {number}")
    return [*turn, ModelResponse(parts=[TextPart(f"module {number} looks fine")])]


def _history(turns: int, start: int = 0) -> list[ModelMessage]:
    return [message for number in range(start, start + turns) for message in _turn(number)]


def _bytes(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def _check(copies: OutgoingCopies, messages: list[ModelMessage], *, images: bool, same_objects: bool = True) -> None:
    """The request built from the kept copies is byte for byte the full pass's, and (``same_objects``) the same
    message objects sit at the same places: the record where nothing is fixed, a copy where something is."""
    request = list(messages)  # a new list per request, as pydantic-ai builds it
    kept = copies.messages(request, images=images)
    full = outgoing_messages(request, images=images)
    assert _bytes(kept) == _bytes(full)
    assert (kept is request) == (full is request)
    if same_objects:
        assert [sent is message for sent, message in zip(kept, request, strict=True)] == \
               [sent is message for sent, message in zip(full, request, strict=True)]


@pytest.mark.parametrize("images", [True, False])
def test_appended_messages_one_at_a_time(images: bool) -> None:
    copies = OutgoingCopies()
    messages: list[ModelMessage] = []
    for message in _history(12):
        messages.append(message)
        if isinstance(message, ModelRequest):  # a request is sent after each request
            _check(copies, messages, images=images)


def test_a_history_with_nothing_to_fix_is_sent_as_it_is() -> None:
    copies = OutgoingCopies()
    messages = history(5, 200)
    for number in range(5):
        messages.append(ModelRequest(parts=[UserPromptPart(f"next {number}")]))
        request = list(messages)
        assert copies.messages(request) is request
        messages.append(ModelResponse(parts=[TextPart("ok")]))


@pytest.mark.parametrize("images", [True, False])
def test_tier_2_and_its_image_placeholders(tmp_path: Path, images: bool) -> None:
    copies = OutgoingCopies()
    messages = [*_history(9), _prompt(100)]
    _check(copies, messages, images=images)
    result = compact_tool_calls(messages, estimator=TokenEstimator(), large_results_dir=tmp_path,
                                protect_recent_tokens=2_000, file_writing_tools=frozenset())
    assert result.placeholder_images >= 2 and result.tokens_saved > 0
    assert result.messages[-1] is messages[-1], "the newest messages are the same objects"
    messages[:] = result.messages
    _check(copies, messages, images=images)
    messages += [ModelResponse(parts=[TextPart("ok")]), *_history(2, start=200)]
    _check(copies, messages, images=images)


def test_an_output_evicted_in_the_middle_of_the_history() -> None:
    copies = OutgoingCopies()
    messages = [*_history(4), _prompt(100)]
    _check(copies, messages, images=False)
    index = 2
    old = messages[index].parts[0]
    assert isinstance(old, ToolReturnPart)
    preview = build_preview(old.model_response_str(), path="/data/large_tool_results/call-0.txt",
                            tool_name=old.tool_name)
    messages[index] = ModelRequest(parts=[ToolReturnPart(old.tool_name, preview, old.tool_call_id)])
    _check(copies, messages, images=False)
    assert "call-0.txt" in _bytes(copies.messages(list(messages), images=False)).decode()


@pytest.mark.parametrize("images", [True, False])
def test_a_summary_replaces_the_beginning(images: bool) -> None:
    copies = OutgoingCopies()
    messages = [*_history(8), _prompt(100)]
    _check(copies, messages, images=images)
    summary = make_summary_message("## Session intent\nread the modules", strategy="summary", kept_from=24,
                                   replaced=24)
    messages[:] = [summary, *messages[24:]]
    _check(copies, messages, images=images)
    messages += [ModelResponse(parts=[TextPart("\n")]), _prompt(101)]
    _check(copies, messages, images=images)


@pytest.mark.parametrize("images", [True, False])
def test_a_rewind_and_a_message_replaced_in_the_middle(images: bool) -> None:
    copies = OutgoingCopies()
    messages = [*_history(8), _prompt(100)]
    _check(copies, messages, images=images)
    length = len(messages)
    del messages[13:]  # rewound to before turn 3's answer
    messages.append(_prompt(101))
    _check(copies, messages, images=images)
    messages += _history(5, start=300)  # as long as before, another last message
    messages.append(_prompt(102))
    assert len(messages) >= length
    _check(copies, messages, images=images)
    answer = next(index for index, message in enumerate(messages[:20]) if isinstance(message, ModelResponse)
                  and "looks fine" in str(message.parts[0]))
    messages[answer] = ModelResponse(parts=[TextPart("  ")])  # same length, same last message
    _check(copies, messages, images=images)
    messages[answer] = ModelResponse(parts=[TextPart("fine again")])
    _check(copies, messages, images=images)


def test_a_message_replaced_by_an_equal_one_sends_the_same_bytes() -> None:
    copies = OutgoingCopies()
    messages = [*_history(6), _prompt(100)]
    _check(copies, messages, images=False)
    messages[1:5] = copy.deepcopy(messages[1:5])
    _check(copies, messages, images=False, same_objects=False)
    messages[:] = [*copy.deepcopy(messages[:-1]), messages[-1]]  # the whole history loaded again
    _check(copies, messages, images=False)


def test_the_newest_request_grows_after_the_hook() -> None:
    """pydantic-ai adds to the newest request after the hooks (its run's metadata, deltas): the next request
    sends it as it is then."""
    copies = OutgoingCopies()
    messages = [*_history(3), _prompt(100)]
    _check(copies, messages, images=False)
    newest = messages[-1]
    assert isinstance(newest, ModelRequest)
    image = BinaryContent(png(10, 10), media_type="image/png")
    newest.parts = [*newest.parts, UserPromptPart(["and this one", image])]
    newest.instructions = "be brief"
    newest.run_id = "run-1"
    messages += [ModelResponse(parts=[TextPart("ok")]), _prompt(101)]
    _check(copies, messages, images=False)


def test_another_model_reading_images_or_not() -> None:
    copies = OutgoingCopies()
    messages = [*_history(6), _prompt(100)]
    for images in (True, False, False, True, False):
        _check(copies, messages, images=images)
        messages += [ModelResponse(parts=[TextPart("ok")]), _prompt(len(messages))]


def test_every_request_of_real_runs_with_tier_2_and_a_summary(tmp_path: Path) -> None:
    """The chain inside agent runs (a model that reads no images): each request carries the full pass's copy of
    the history as it stands after the chain's compactions."""
    script = SummarizerScript()
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.85,
                           window=10_000)
    manager = harness.manager
    hook = manager.before_request
    checked: list[int] = []

    async def before_request(ctx: RunContext[Any], request_context: ModelRequestContext) -> ModelRequestContext:
        sent = await hook(ctx, request_context)
        assert _bytes(sent.messages) == _bytes(outgoing_messages(list(ctx.messages), images=False))
        checked.append(len(sent.messages))
        return sent

    manager.before_request = before_request  # type: ignore[method-assign]
    messages = seed(harness, _history(6))
    agent = harness.agent()
    for number in range(12):
        earlier = [*messages, *_history(1, start=50 + number)] if number % 2 else messages
        if number == 8:
            manager.request_compact()
        messages = agent.run_sync(f"next {number}", message_history=earlier).all_messages()
    finished = [event for event in harness.events if isinstance(event, CompactionFinished)]
    assert {event.strategy for event in finished} == {"pointer", "summary"} and len(checked) == 12
    assert min(checked) < max(checked), "the history was shortened in between"
