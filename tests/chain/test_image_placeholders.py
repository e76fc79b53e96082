"""Tier 2 and the way out replace images by one line naming their saved copy; the running turn's image is kept
unless the pre-flight's last resort needs the room; nothing else of the history changes."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import BinaryContent, ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.support.images import png
from tui.chain.estimate import TokenEstimator
from tui.chain.image_placeholders import without_images
from tui.chain.image_tokens import openai_tiles
from tui.chain.outgoing import outgoing_messages
from tui.chain.tool_compaction import compact_tool_calls
from tui.text.attachment_text import IMAGE_PLACEHOLDER_OPEN, attachment_item


def _prompt(name: str, width: int, height: int) -> ModelRequest:
    data = png(width, height)
    item = attachment_item(name, len(data), "image", "(an image)", pixels=(width, height), media_type="image/png",
                           saved=f"/data/large_tool_results/{name}")
    return ModelRequest(parts=[UserPromptPart([f"look at @{name}", item, BinaryContent(data, media_type="image/png")])])


def _history() -> list[ModelMessage]:
    return [_prompt("old.png", 1280, 720), ModelResponse(parts=[TextPart("a chart")]),
            _prompt("new.png", 640, 480)]


def _estimator() -> TokenEstimator:
    estimator = TokenEstimator()
    estimator.use_image_rule(openai_tiles(85, 170))
    return estimator


def _images(message: ModelMessage) -> int:
    part = message.parts[0]
    assert isinstance(part, UserPromptPart) and not isinstance(part.content, str)
    return sum(isinstance(item, BinaryContent) for item in part.content)


def test_tier_2_replaces_the_images_of_older_turns_only(tmp_path: Path) -> None:
    history = _history()
    result = compact_tool_calls(history, estimator=_estimator(), large_results_dir=tmp_path,
                                protect_recent_tokens=10_000, file_writing_tools=frozenset())
    assert result.placeholder_images == 1 and result.tokens_saved >= 1_000
    assert result.messages[1] is history[1] and result.messages[2] is history[2], "the rest is untouched"
    assert _images(result.messages[0]) == 0 and _images(result.messages[2]) == 1
    old = result.messages[0].parts[0]
    assert isinstance(old, UserPromptPart) and not isinstance(old.content, str)
    assert old.content[0] == "look at @old.png", "what was typed stays"
    assert old.content[2] == (f"{IMAGE_PLACEHOLDER_OPEN}old.png · 1280×720 · {len(png(1280, 720))} bytes; "
                              "saved at /data/large_tool_results/old.png]")
    again = compact_tool_calls(result.messages, estimator=_estimator(), large_results_dir=tmp_path,
                               protect_recent_tokens=10_000, file_writing_tools=frozenset())
    assert again.placeholder_images == 0, "a placeholder is never rewritten"


def test_the_last_resort_takes_the_running_turns_image_too(tmp_path: Path) -> None:
    result = compact_tool_calls(_history(), estimator=_estimator(), large_results_dir=tmp_path,
                                protect_recent_tokens=0, file_writing_tools=frozenset(), include_current_turn=True)
    assert result.placeholder_images == 2 and _images(result.messages[2]) == 0


def test_a_model_that_reads_no_images_is_sent_placeholders_and_the_record_keeps_them() -> None:
    history = _history()
    sent = outgoing_messages(history, images=False)
    assert sent is not history and [_images(message) for message in (sent[0], sent[2])] == [0, 0]
    assert [_images(message) for message in (history[0], history[2])] == [1, 1], "the history is not changed"
    assert outgoing_messages(history) is history
    assert without_images(sent) is sent, "nothing left to replace: the same list"


def test_an_image_without_its_attachment_item_still_gets_a_line() -> None:
    bare = [ModelRequest(parts=[UserPromptPart(["see", BinaryContent(png(5, 5), media_type="image/png")])])]
    part = without_images(list(bare))[0].parts[0]
    assert isinstance(part, UserPromptPart) and not isinstance(part.content, str)
    assert str(part.content[1]).startswith(f"{IMAGE_PLACEHOLDER_OPEN}image/png, ")
