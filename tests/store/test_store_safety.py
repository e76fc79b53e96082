"""Listing never destroys, closing never deletes a session with anything in it, a broken lock file is a
clear error (issue 8, items 9 and 11), and store errors on a full disk are one line."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.store_errors import LockFileError, StorageError


def exchange(prompt: str) -> list:
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(f"reply to {prompt}")])]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(DataDir(tmp_path / "data"))


def test_listing_keeps_an_empty_history_with_a_corrupt_session_json_and_events(store: SessionStore) -> None:
    handle = store.create()
    handle.append_messages(exchange("work worth keeping"))
    handle.events.append({"kind": "usage", "tokens": 10})
    handle.close()
    (handle.directory / "messages.json").write_bytes(b"")  # emptied outside deep-tui
    (handle.directory / "session.json").write_text("{ corrupt", encoding="utf-8")
    before = sorted(p.name for p in handle.directory.iterdir())

    [meta] = store.list_sessions()  # session.json is set aside and rebuilt: 0 messages, untitled
    assert meta.id == handle.id and meta.message_count == 0
    after = sorted(p.name for p in handle.directory.iterdir())
    assert set(before) <= set(after) and "session.json.corrupt" in after and "events.jsonl" in after
    assert (handle.directory / "session.json.corrupt").read_text() == "{ corrupt"
    store.list_sessions()
    assert handle.directory.is_dir(), "listing again destroys nothing either"


@pytest.mark.parametrize("extra", ["events.jsonl", "messages.json.torn-20250101-000000-000000", "notes.txt"])
def test_an_empty_untitled_session_with_anything_else_in_it_is_kept(store: SessionStore, extra: str) -> None:
    handle = store.create()
    handle.close()
    (handle.directory / extra).write_text("something", encoding="utf-8")
    assert [meta.id for meta in store.list_sessions()] == [handle.id]
    assert (handle.directory / extra).read_text() == "something"


def test_an_untouched_new_session_is_still_cleared(store: SessionStore) -> None:
    handle = store.create()
    handle.close()
    (handle.directory / "messages.json").write_bytes(b"[\n]\n")
    assert store.list_sessions() == []
    assert not handle.directory.exists()


@pytest.mark.parametrize(("typed", "cleared"), [
    (['"/context"', '"/help"'], True),          # only commands were typed: nothing to keep
    (['"/context"', '"fix the bug"'], False),   # a prompt whose turn never recorded: kept
    (['"//etc/hosts is a path"'], False),       # a message that starts with a slash
    (['"/help"', '{"torn'], False),             # a line that cannot be read: kept
])
def test_a_new_session_where_only_commands_were_typed_is_still_cleared(store: SessionStore, typed: list[str],
                                                                       cleared: bool) -> None:
    handle = store.create()
    handle.close()
    history = handle.directory / "prompt_history.jsonl"  # as the app's prompt history writes it
    history.write_text("".join(line + "\n" for line in typed), encoding="utf-8")
    assert [meta.id for meta in store.list_sessions()] == ([] if cleared else [handle.id])
    assert handle.directory.exists() is not cleared
    if not cleared:
        assert history.read_text(encoding="utf-8").splitlines() == typed


async def test_closing_a_resumed_session_that_became_empty_deletes_nothing(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    factory = RuntimeFactory(settings=Settings(), data_dir=data, workdir=tmp_path, choice=choose_model("offline", None))
    runtime = await factory.open_request(SessionRequest())
    [event async for event in runtime.run_turn("help")]
    await runtime.aclose()
    directory = data.sessions_dir / runtime.info.session_id
    (directory / "messages.json").write_bytes(b"")  # emptied outside deep-tui
    resumed = await factory.open_request(SessionRequest(resume=runtime.info.session_id))
    assert any("session.json recorded 2 messages" in warning for warning in resumed.info.warnings)
    await resumed.aclose()
    assert directory.is_dir() and (directory / "events.jsonl").exists(), "closing removed nothing"

    fresh = await factory.open_request(SessionRequest())  # a new session nobody typed into: cleared
    await fresh.aclose()
    assert not (data.sessions_dir / fresh.info.session_id).exists()


def test_a_lock_that_is_a_directory_is_a_clear_error(store: SessionStore) -> None:
    handle = store.create()
    handle.append_messages(exchange("locked out"))
    handle.close()
    lock = handle.directory / "lock"
    lock.unlink()
    lock.mkdir()
    with pytest.raises(LockFileError, match=r"lock is a directory, not a lock file"):
        store.open(handle.id)
    assert [meta.id for meta in store.list_sessions()] == [handle.id]
    assert lock.is_dir(), "nothing removed"


def test_cli_with_a_lock_directory_prints_one_line_and_exits_2(
        store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli.main import main

    handle = store.create()
    handle.append_messages(exchange("locked out"))
    handle.close()
    (handle.directory / "lock").unlink()
    (handle.directory / "lock").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--data-dir", str(tmp_path / "data"), "--resume", handle.id, "hello"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("deep-tui: error: cannot lock session") and "Traceback" not in err
    assert main(["sessions", "--data-dir", str(tmp_path / "data"), "--json"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == [handle.id]


def test_a_full_disk_when_creating_a_session_is_one_error_and_leaves_nothing(
        store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.store.meta as meta_module

    def full(path: Path, data: object, *, durable: bool = False) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(meta_module, "write_atomic", full)
    with pytest.raises(StorageError, match=r"cannot create a session in .*: No space left on device"):
        store.create()
    assert not store.root.exists() or not any(store.root.iterdir())


def test_a_full_disk_after_an_append_keeps_the_append_and_counts_it(
        store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.store.meta as meta_module

    handle = store.create()
    real_write = meta_module.write_atomic

    def full(path: Path, data: object, *, durable: bool = False) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(meta_module, "write_atomic", full)
    assert handle.append_messages(exchange("saved")) == 0  # session.json could not follow: logged, not raised
    assert handle.append_messages(exchange("saved too")) == 2, "not appended twice"
    monkeypatch.setattr(meta_module, "write_atomic", real_write)
    handle.close()
    reopened = store.open(handle.id)
    assert reopened.meta.message_count == reopened.messages.count() == 4
    reopened.close()
