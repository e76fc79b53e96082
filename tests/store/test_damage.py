"""Damage anywhere in messages.json loses nothing intact (issue 8, item 4).

Intact records are salvaged, damaged places keep their index as a note, the damaged bytes are kept
aside under names that are never reused, the user is told exactly what happened, and the session
opens — in the store, in ``deep-tui run`` and in the app.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.damage import is_damage_note
from tui.store.messages_file import MessagesFile, encode_message
from tui.store.store_errors import CorruptSessionError

BAD_SCHEMA = b'{"parts":[{"part_kind":"no-such-part","content":1}],"kind":"request"}'


def history(count: int) -> list[ModelMessage]:
    """``count`` messages: prompts, tool calls and returns, answers (unique text in each)."""
    messages: list[ModelMessage] = []
    number = 0
    while len(messages) < count:
        call = f"call-{number}"
        messages += [
            ModelRequest(parts=[UserPromptPart(f"question {number} ✓")]),
            ModelResponse(parts=[ToolCallPart("read_file", {"path": f"f{number}.txt"}, call)]),
            ModelRequest(parts=[ToolReturnPart("read_file", f"contents {number}\n" * 3, call)]),
            ModelResponse(parts=[TextPart(f"answer {number}")]),
        ]
        number += 1
    return messages[:count]


def lines_of(messages: list[ModelMessage]) -> list[bytes]:
    return [encode_message(message) for message in messages]


def new_session(tmp_path: Path, messages: list[ModelMessage]) -> tuple[SessionStore, str, Path]:
    store = SessionStore(DataDir(tmp_path / "data"))
    handle = store.create(model="offline")
    handle.append_messages(messages)
    handle.close()
    return store, handle.id, handle.messages.path


def replace_line(path: Path, number: int, new: bytes) -> bytes:
    """Replace line ``number`` of the file (line 0 is ``[``, so line n holds message n), keeping its comma;
    returns the new bytes."""
    lines = path.read_bytes().split(b"\n")
    lines[number] = new + (b"," if lines[number].endswith(b",") else b"")
    data = b"\n".join(lines)
    path.write_bytes(data)
    return data


def test_a_truncated_record_in_the_middle_loses_no_later_message(tmp_path: Path) -> None:
    messages = history(16)
    store, session_id, path = new_session(tmp_path, messages)
    original = path.read_bytes().split(b"\n")
    damaged = replace_line(path, 6, original[6][: len(original[6]) // 2])  # message 6 of 16, cut short

    handle = store.open(session_id)
    [warning] = handle.warnings
    assert "was damaged: 15 intact messages recovered" in warning
    assert "1 damaged message(s) (#6;" in warning and "replaced by a note" in warning
    [kept] = path.parent.glob("messages.json.damaged-*")
    assert kept.name in warning and kept.read_bytes() == damaged, "every original byte is kept aside"
    assert handle.messages.count() == 16
    loaded = handle.messages.load().messages
    assert is_damage_note(loaded[5]) and kept.name in loaded[5].parts[0].content
    assert lines_of(loaded[:5] + loaded[6:]) == lines_of(messages[:5] + messages[6:])
    assert len(ModelMessagesTypeAdapter.validate_json(path.read_bytes())) == 16, "readable by pydantic-ai again"
    handle.append_messages(history(2))
    handle.close()

    again = store.open(session_id)
    assert again.warnings == [] and again.messages.count() == 18
    again.close()


def test_a_schema_invalid_record_in_the_middle_is_a_note_read_only_and_repaired_by_a_writer(tmp_path: Path) -> None:
    messages = history(12)
    store, session_id, path = new_session(tmp_path, messages)
    damaged = replace_line(path, 4, BAD_SCHEMA)

    viewer = store.open(session_id, read_only=True)
    loaded = viewer.messages.load().messages
    assert len(loaded) == 12 and is_damage_note(loaded[3])
    assert "unreadable by pydantic-ai" in loaded[3].parts[0].content
    assert lines_of(loaded[:3] + loaded[4:]) == lines_of(messages[:3] + messages[4:])
    assert viewer.messages.notices and "message 4" in viewer.messages.notices[0]
    assert path.read_bytes() == damaged, "a reader changes nothing"
    viewer.close()

    writer = store.open(session_id)
    assert writer.messages.load_range(0, 12)[3].parts[0].content.startswith("[deep-tui: message 4")
    writer.append_messages(history(1))
    [kept] = path.parent.glob("messages.json.damaged-*")
    assert kept.read_bytes() == damaged
    assert any(kept.name in notice for notice in writer.take_notices())
    assert len(ModelMessagesTypeAdapter.validate_json(path.read_bytes())) == 13
    writer.close()


def test_whole_records_inside_garbage_are_recovered(tmp_path: Path) -> None:
    messages = history(6)
    _, _, path = new_session(tmp_path, messages)
    data = path.read_bytes()
    lines = lines_of(messages)
    glued = data.replace(lines[2] + b",\n" + lines[3], b"\x00garbage" + lines[2] + b"\x1b[2J" + lines[3] + b"!!")
    path.write_bytes(glued)
    history_file = MessagesFile(path)
    assert lines_of(history_file.load().messages) == lines
    assert history_file.repair() is not None
    assert lines_of(list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))) == lines


def test_kept_copies_never_overwrite_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.store.messages_file as messages_file

    monkeypatch.setattr(messages_file, "stamp", lambda: "20250101-000000-000000")  # the same instant twice
    store, session_id, path = new_session(tmp_path, history(8))
    contents = []
    for line in (3, 5):
        contents.append(replace_line(path, line, b'{"parts": broken'))
        store.open(session_id).close()
    kept = sorted(path.parent.glob("messages.json.damaged-*"))
    assert [p.name for p in kept] == ["messages.json.damaged-20250101-000000-000000",
                                      "messages.json.damaged-20250101-000000-000000.1"]
    assert [p.read_bytes() for p in kept] == contents


@pytest.mark.parametrize("how", ["emptied", "deleted", "shortened"])
def test_a_history_shorter_than_its_metadata_says_warns(tmp_path: Path, how: str) -> None:
    store, session_id, path = new_session(tmp_path, history(4))
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "deleted":
        path.unlink()
    else:
        path.write_bytes(b"[\n" + encode_message(history(1)[0]) + b"\n]\n")
    handle = store.open(session_id)
    [warning] = handle.warnings
    assert "session.json recorded 4 messages" in warning
    assert {"emptied": "is empty", "deleted": "is missing", "shortened": "holds 1 messages"}[how] in warning
    handle.close()


def test_run_on_a_damaged_session_warns_and_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli.main import main

    _store, session_id, path = new_session(tmp_path, history(8))
    replace_line(path, 2, BAD_SCHEMA)
    replace_line(path, 6, b'{"parts":[{"con')
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--data-dir", str(tmp_path / "data"), "--resume", session_id, "help"])
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err and "CorruptSessionError" not in err
    assert "deep-tui: warning:" in err and "6 intact messages recovered" in err
    messages = list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))
    assert len(messages) == 10 and is_damage_note(messages[1]) and is_damage_note(messages[5])


async def test_the_app_resumes_a_damaged_session_and_the_picker_opens_another(tmp_path: Path) -> None:
    from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
    from tui.agent.session.factory import SessionRequest
    from tui.app.screens.session_picker import SessionPickerScreen
    from tui.app.widgets.chat_blocks import UserBlock

    factory = make_factory(tmp_path)
    ids = []
    for line, damage in ((3, b'{"parts":[{"content":"cut sh'), (5, BAD_SCHEMA)):
        handle = factory.store.create(model="offline")
        handle.append_messages(history(8))
        handle.close()
        replace_line(handle.messages.path, line, damage)
        ids.append(handle.id)
    app = make_app(factory, SessionRequest(resume=ids[0]))  # a torn record: found, repaired, told at open
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_idle(app, pilot)
        assert app.runtime.info.session_id == ids[0]
        assert any("damaged: 7 intact messages recovered" in str(n.message) for n in app._notifications)
        shown = [str(block.render()) for block in app.query(UserBlock)]
        assert any("[deep-tui: message 3 of this session was damaged" in text for text in shown), shown
        await pilot.press(*"help", "enter")
        await wait_idle(app, pilot)
        assert app.runtime.history_count() == 10

        await pilot.press("ctrl+s")  # a record pydantic-ai cannot read: shown as a note where it was
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen) and app.screen._loaded, "picker")
        picker = app.screen
        await pilot.press(*ids[1][:6])
        await wait_until(pilot, lambda: [entry.meta.id for entry in picker._shown] == [ids[1]], "the filter")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.runtime.info.session_id == ids[1], "the session to open")
        await wait_idle(app, pilot)
        assert app.runtime.info.session_id == ids[1]
        shown = [str(block.render()) for block in app.query(UserBlock)]
        assert any("[deep-tui: message 5 of this session was damaged on disk (unreadable by pydantic-ai" in text
                   for text in shown)
        await pilot.press(*"help", "enter")
        await wait_idle(app, pilot)
        assert app.runtime.history_count() == 10 and app.is_running
    await app.runtime.aclose()
    assert list(factory.store.root.glob(f"{ids[1]}/messages.json.damaged-*")), "repaired by the turn's write"


# -- the property: random damage, nothing intact lost ------------------------------------------------

MESSAGES = history(10)
LINES = lines_of(MESSAGES)
CLEAN = b"[\n" + b",\n".join(LINES) + b"\n]\n"
SPANS = []
_position = 2
for _line in LINES:
    SPANS.append((_position, _position + len(_line)))
    _position += len(_line) + 2

garbage = st.binary(min_size=1, max_size=300) | st.sampled_from(
    [b"\n", b",\n", b"]\n", b"\n[\n", b"{", b"}", LINES[0][:50], b'{"parts":[', BAD_SCHEMA])
damage = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, len(CLEAN)), st.just(b"")),
    st.tuples(st.just("overwrite"), st.integers(0, len(CLEAN) - 1), garbage),
    st.tuples(st.just("insert"), st.integers(0, len(CLEAN)), garbage),
)


def apply(data: bytes, spans: list[tuple[int, int] | None], operation: tuple[str, int, bytes]
          ) -> tuple[bytes, list[tuple[int, int] | None]]:
    """The damaged bytes and where each original record still sits whole (``None``: it was hit)."""
    kind, at, chunk = operation
    at = min(at, len(data))
    result: list[tuple[int, int] | None] = []
    if kind == "truncate":
        return data[:at], [span if span and span[1] <= at else None for span in spans]
    if kind == "overwrite":
        chunk = chunk[: max(0, len(data) - at)]
        new = data[:at] + chunk + data[at + len(chunk):]
        for span in spans:
            hit = span and at < span[1] and at + len(chunk) > span[0] and new[span[0]:span[1]] != data[span[0]:span[1]]
            result.append(None if hit else span)
        return new, result
    for span in spans:
        if span is None or span[0] < at < span[1]:
            result.append(None)
        else:
            result.append((span[0] + len(chunk), span[1] + len(chunk)) if span[0] >= at else span)
    return data[:at] + chunk + data[at:], result


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(damage, min_size=1, max_size=3))
def test_random_damage_keeps_every_intact_record_and_the_session_opens(
        tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, int, bytes]]) -> None:
    data, spans = CLEAN, list[tuple[int, int] | None](SPANS)
    for operation in operations:
        data, spans = apply(data, spans, operation)
    intact = [LINES[number] for number, span in enumerate(spans) if span is not None]

    store, session_id, path = new_session(tmp_path_factory.mktemp("damage"), MESSAGES)
    path.write_bytes(data)
    if not intact and data.strip() and not data.lstrip().startswith(b"["):
        # Nothing intact and no array: either nothing reads as a history (refused, left untouched), or a
        # record-shaped line was recognized (opened, with those bytes kept aside — checked below).
        try:
            handle = store.open(session_id)
        except CorruptSessionError as refused:
            assert "not a message history" in str(refused)
            assert path.read_bytes() == data, "refused and left untouched"
            return
        kept_aside = [p.read_bytes() for p in path.parent.glob("messages.json.*")]
        assert any(data.strip() in content for content in kept_aside), "the unreadable bytes are kept aside"
    else:
        handle = store.open(session_id)
    messages = handle.messages.load().messages
    loaded = lines_of(messages)
    survivors = iter(loaded)
    assert all(line in survivors for line in intact), "every intact record, in order"
    kept = {p.name: p.read_bytes() for p in path.parent.glob("messages.json.*")}
    if kept:
        assert any(data.endswith(content) for content in kept.values()), "the damaged bytes are kept aside"

    extra = history(1)
    handle.append_messages(extra)
    after = list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))
    assert len(after) == len(messages) + 1, "whole again"
    assert [is_damage_note(m) for m in after] == [is_damage_note(m) for m in messages + extra], "nothing moved"
    survivors = iter(lines_of(after))
    assert all(line in survivors for line in [*intact, *lines_of(extra)])
    handle.close()
    json.loads(path.read_bytes())
