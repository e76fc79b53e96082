"""tui.base.nofollow and its users: no link under the data directory is followed, by reads, writes or renames."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui.base.atomic import create_new, link_new, write_atomic
from tui.base.nofollow import (
    GITIGNORE_TEXT,
    LinkRefusedError,
    check_no_links,
    make_data_root,
    make_dirs,
    open_file,
    read_bytes,
)
from tui.base.paths import DataDir
from tui.store.events_file import EventLog
from tui.store.messages_file import MessagesFile
from tui.store.session_store import SessionStore
from tui.store.store_errors import LinkedPathError, LockFileError


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the data directory holding a file that must not change."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("SECRET\n")
    return directory


def _unchanged(outside: Path) -> bool:
    return sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and \
        (outside / "secret.txt").read_text() == "SECRET\n"


def test_a_linked_file_is_refused_naming_it(tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "data" / "messages.json"
    link.parent.mkdir()
    os.symlink(outside / "secret.txt", link)
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREAT, os.O_RDWR | os.O_CREAT | os.O_TRUNC):
        with pytest.raises(LinkRefusedError) as refused:
            open_file(link, flags)
        assert str(refused.value).startswith(f"{link} is a symbolic link")
    assert _unchanged(outside)


def test_a_linked_directory_on_the_way_is_refused_even_when_creating(tmp_path: Path, outside: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside, data / "sessions")
    target = data / "sessions" / "abc" / "lock"
    with pytest.raises(LinkRefusedError, match="sessions is a symbolic link"):
        open_file(target, os.O_RDWR | os.O_CREAT, make_parents=True)
    with pytest.raises(LinkRefusedError):
        make_dirs(data / "sessions" / "abc")
    with pytest.raises(LinkRefusedError):
        read_bytes(data / "sessions" / "secret.txt")
    with pytest.raises(LinkRefusedError):
        check_no_links(target)
    assert _unchanged(outside)


def test_a_fifo_where_a_file_belongs_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "events.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LinkRefusedError, match="not a regular file"):
        open_file(fifo, os.O_RDONLY)


def test_write_atomic_refuses_a_linked_target_and_never_opens_a_planted_temporary_name(tmp_path: Path,
                                                                                       outside: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside / "secret.txt", data / "session.json")
    with pytest.raises(LinkRefusedError):
        write_atomic(data / "session.json", "{}")
    assert (data / "session.json").is_symlink()
    # A planted name for every temporary file it could choose cannot be guessed; the one it uses is O_EXCL.
    write_atomic(data / "other.json", "{}")
    assert (data / "other.json").read_text() == "{}"
    assert sorted(p.name for p in data.iterdir()) == ["other.json", "session.json"]
    os.symlink(outside, data / "main")
    with pytest.raises(LinkRefusedError):
        write_atomic(data / "main" / "MEMORY.md", "fact")
    assert _unchanged(outside)


def test_create_new_takes_another_name_over_a_planted_link_and_link_new_refuses_a_linked_source(
        tmp_path: Path, outside: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside / "secret.txt", data / "messages.json.torn-1")
    used = create_new(data / "messages.json.torn-1", b"tail")
    assert used.name == "messages.json.torn-1.1" and used.read_bytes() == b"tail"
    os.symlink(outside / "secret.txt", data / "messages.json")
    with pytest.raises(LinkRefusedError):
        link_new(data / "messages.json", data / "messages.json.orig")
    assert not os.path.lexists(data / "messages.json.orig")
    assert _unchanged(outside)


def test_make_data_root_writes_a_gitignore_only_into_a_directory_it_creates(tmp_path: Path) -> None:
    fresh = tmp_path / "project" / ".deep-tui"
    make_data_root(fresh)
    assert (fresh / ".gitignore").read_text() == GITIGNORE_TEXT
    assert GITIGNORE_TEXT.splitlines()[-1] == "*"
    (fresh / ".gitignore").write_text("mine\n")
    make_data_root(fresh)
    assert (fresh / ".gitignore").read_text() == "mine\n"
    existing = tmp_path / "existing"
    existing.mkdir()
    make_data_root(existing)
    assert not (existing / ".gitignore").exists()


def test_a_new_session_creates_the_data_dir_with_its_gitignore(tmp_path: Path) -> None:
    store = SessionStore(DataDir(tmp_path / ".deep-tui"))
    handle = store.create()
    handle.close()
    assert (tmp_path / ".deep-tui" / ".gitignore").read_text() == GITIGNORE_TEXT


def test_the_store_refuses_each_linked_session_file(tmp_path: Path, outside: Path) -> None:
    store = SessionStore(DataDir(tmp_path / "data"))
    handle = store.create()
    session_id = handle.id
    handle.close()
    directory = store.root / session_id
    for name in ("messages.json", "events.jsonl", "session.json"):
        (directory / name).unlink(missing_ok=True)
        os.symlink(outside / "secret.txt", directory / name)
        with pytest.raises(LinkedPathError, match=f"{directory / name} is a symbolic link"):
            store.open(session_id)
        (directory / name).unlink()
    (directory / "lock").unlink()
    os.symlink(outside / "secret.txt", directory / "lock")
    with pytest.raises(LockFileError, match="lock is a symbolic link"):
        store.open(session_id)
    with pytest.raises(LockFileError):
        store.delete(session_id)
    assert _unchanged(outside)


def test_the_files_of_the_store_refuse_links_by_themselves(tmp_path: Path, outside: Path) -> None:
    """Defence in depth: MessagesFile and EventLog refuse a link even when opened directly."""
    os.symlink(outside / "secret.txt", tmp_path / "messages.json")
    os.symlink(outside / "secret.txt", tmp_path / "events.jsonl")
    with pytest.raises(LinkedPathError):
        MessagesFile(tmp_path / "messages.json").count()
    with pytest.raises(LinkRefusedError):
        EventLog(tmp_path / "events.jsonl").append({"kind": "x"})
    with pytest.raises(LinkRefusedError):
        EventLog(tmp_path / "events.jsonl").read()
    assert _unchanged(outside)


def test_a_linked_sessions_dir_is_refused_by_listing_and_creating(tmp_path: Path, outside: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside, data / "sessions")
    store = SessionStore(DataDir(data))
    with pytest.raises(LinkedPathError, match="sessions is a symbolic link"):
        store.list_sessions()
    with pytest.raises(LinkedPathError, match="sessions is a symbolic link"):
        store.create()
    assert _unchanged(outside)


def test_a_linked_session_directory_is_skipped_in_listings(tmp_path: Path, outside: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore(DataDir(tmp_path / "data"))
    store.create().close()
    planted = outside / "abcdefabcdef"
    planted.mkdir()
    (planted / "session.json").write_text('{"title": "SECRET"}')
    os.symlink(planted, store.root / "abcdefabcdef")
    listed = store.list_sessions()
    assert all(meta.id != "abcdefabcdef" and "SECRET" not in meta.title for meta in listed)
    assert any("abcdefabcdef is a symbolic link" in record.getMessage() for record in caplog.records)


def test_the_default_data_dir_being_a_link_is_unusable_but_a_named_one_is_resolved(tmp_path: Path,
                                                                                   outside: Path) -> None:
    os.symlink(outside, tmp_path / ".deep-tui")
    default = DataDir.resolve(cwd=tmp_path)
    assert default.root == tmp_path / ".deep-tui"
    reason = default.unusable_reason()
    assert reason is not None and "symbolic link" in reason and str(tmp_path / ".deep-tui") in reason
    named = DataDir.resolve(tmp_path / ".deep-tui")
    assert named.root == outside and named.unusable_reason() is None


def test_the_search_index_never_reads_a_saved_output_through_a_link(tmp_path: Path, outside: Path) -> None:
    from tui.store.search.searchable_text import read_saved_output

    data = tmp_path / "data"
    data.mkdir()
    os.symlink(outside, data / "large_tool_results")
    assert read_saved_output(str(data / "large_tool_results" / "secret.txt"), data / "large_tool_results") is None
    (data / "large_tool_results").unlink()
    (data / "large_tool_results").mkdir()
    os.symlink(outside / "secret.txt", data / "large_tool_results" / "call-1.txt")
    assert read_saved_output(str(data / "large_tool_results" / "call-1.txt"), data / "large_tool_results") is None
    (data / "large_tool_results" / "call-2.txt").write_text("own output")
    assert read_saved_output(str(data / "large_tool_results" / "call-2.txt"), data / "large_tool_results") == \
        "own output"
