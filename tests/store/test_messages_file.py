"""messages.json: round trip, append in place, torn tails, foreign layouts, summaries."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.store import MessagesFile
from tui.store.messages_file import SUMMARY_METADATA_KEY, encode_message


def turn(number: int) -> list[ModelMessage]:
    call_id = f"call-{number}"
    return [
        ModelRequest(parts=[UserPromptPart(f"question {number}")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": f"f{number}.txt"}, call_id)]),
        ModelRequest(parts=[ToolReturnPart("read_file", f"contents {number}", call_id)]),
        ModelResponse(parts=[TextPart(f"answer {number}")]),
    ]


def summary(text: str, kept_from: int) -> ModelRequest:
    return ModelRequest(parts=[CompactionPart(content=text, metadata={SUMMARY_METADATA_KEY: {
        "kept_from": kept_from, "strategy": "summary", "replaced": kept_from}})])


def dumped(messages: list[ModelMessage]) -> list[bytes]:
    return [encode_message(message) for message in messages]


def test_round_trip_is_readable_by_pydantic_ai(tmp_path: Path) -> None:
    history = MessagesFile(tmp_path / "messages.json")
    messages = turn(1) + turn(2)
    assert history.append(messages[:3]) == 0
    assert history.append(messages[3:]) == 3
    reread = ModelMessagesTypeAdapter.validate_json((tmp_path / "messages.json").read_bytes())
    assert dumped(list(reread)) == dumped(messages)
    fresh = MessagesFile(tmp_path / "messages.json")
    assert fresh.count() == 8
    assert dumped(fresh.load().messages) == dumped(messages)
    assert dumped(fresh.load_range(2, 5)) == dumped(messages[2:5])
    assert dumped(fresh.load_tail(3)) == dumped(messages[-3:])


def test_append_to_ten_thousand_messages_leaves_prefix_untouched(tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    history = MessagesFile(path)
    for number in range(2500):
        history.append(turn(number))
    assert history.count() == 10_000
    before = path.read_bytes()
    body_end = before.rindex(b"}") + 1
    digest = hashlib.sha256(before[:body_end]).hexdigest()
    reopened = MessagesFile(path)
    assert reopened.append(turn(9999)) == 10_000
    after = path.read_bytes()
    assert hashlib.sha256(after[:body_end]).hexdigest() == digest
    assert after.endswith(b"\n]\n")
    assert len(ModelMessagesTypeAdapter.validate_json(after)) == 10_004


def test_torn_tail_at_every_offset_loads_the_rest_and_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    history = MessagesFile(path)
    first_turn = turn(1)
    history.append(first_turn)
    complete = path.read_bytes()
    history.append([ModelResponse(parts=[TextPart("the last message " * 3)])])
    data = path.read_bytes()
    last_start = len(complete) - 3  # where the appended ",\n{...}" begins
    for cut in range(last_start, len(data) - 3):  # up to, not incl., its last "}"
        path.write_bytes(data[:cut])
        result = MessagesFile(path).load()
        assert dumped(result.messages) == dumped(first_turn), cut
        if cut > last_start + 2:  # more than the ",\n" framing was written
            assert result.warning and result.dropped_bytes > 0, cut
    path.write_bytes(data[: last_start + 20])
    torn = MessagesFile(path)
    assert torn.load().dropped_bytes > 0
    second_turn = turn(2)
    torn.append(second_turn)
    reread = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    assert dumped(list(reread)) == dumped(first_turn + second_turn)
    [aside] = list(tmp_path.glob("messages.json.torn-*"))
    assert aside.read_bytes() == data[last_start: last_start + 20]


def test_foreign_layout_is_converted_with_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    original = ModelMessagesTypeAdapter.dump_json(turn(1) + turn(2), indent=2)
    path.write_bytes(original)
    history = MessagesFile(path)
    assert history.count() == 8
    assert (tmp_path / "messages.json.orig").read_bytes() == original
    history.append(turn(3))
    assert len(ModelMessagesTypeAdapter.validate_json(path.read_bytes())) == 12


def test_unreadable_history_is_refused_and_left_untouched(tmp_path: Path) -> None:
    from tui.store.store_errors import CorruptSessionError

    path = tmp_path / "messages.json"
    path.write_bytes(b'{"not": "an array"}')
    with pytest.raises(CorruptSessionError):
        MessagesFile(path).load()
    assert path.read_bytes() == b'{"not": "an array"}'


def test_working_context_starts_at_the_last_summary(tmp_path: Path) -> None:
    history = MessagesFile(tmp_path / "messages.json")
    third, fourth = turn(3), turn(4)
    history.append(turn(1) + turn(2))  # 0..7
    history.append([summary("first summary", kept_from=4)])  # 8 keeps 4..7
    history.append(third)  # 9..12
    history.append([summary("second summary", kept_from=10)])  # 13 keeps 10..12
    history.append(fourth)  # 14..17
    messages, indices = history.load_working_context_indexed()
    assert indices == [13, 10, 11, 12, 14, 15, 16, 17]
    first = messages[0]
    assert isinstance(first, ModelRequest) and isinstance(first.parts[0], CompactionPart)
    assert first.parts[0].content == "second summary"
    assert dumped(messages[1:]) == dumped(third[1:] + fourth)
    assert history.last_summary_index() == 13


def test_text_mentioning_the_marker_is_not_a_summary(tmp_path: Path) -> None:
    history = MessagesFile(tmp_path / "messages.json")
    history.append([ModelRequest(parts=[UserPromptPart('what is "deep_tui_summary" compaction?')])])
    assert history.last_summary_index() is None
    assert len(history.load_working_context()) == 1
