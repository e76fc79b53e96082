"""The search index over every session: built from disk, kept current, forks once, never in the way."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from tests.search.support import data_dir, exchange, fork_session, make_session, tool_round
from tui.chain.summary_message import make_summary_message
from tui.store.search.database import read_rows
from tui.store.search.searcher import HistorySearch, QueryTooShort
from tui.store.search.terms import plain_snippet
from tui.store.session_store import SessionStore


def doc_count(search: HistorySearch, session: str | None = None) -> int:
    connection = search.index.connection()
    if session is None:
        return connection.execute("SELECT count(*) FROM docs").fetchone()[0]
    return connection.execute("SELECT count(*) FROM docs WHERE session=?", (session,)).fetchone()[0]


def found(search: HistorySearch, query: str, **kwargs: object) -> list[tuple[str, int, str]]:
    return [(hit.session, hit.message, hit.role) for hit in search.search(query, **kwargs).hits]  # type: ignore[arg-type]


def test_every_kind_of_content_is_found_with_session_message_role_and_snippet(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    saved = data.large_results_dir / "call-9-abc.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("line\n" * 50 + "the kubernetes manifest lives in deploy/k8s/prod.yaml\n", encoding="utf-8")
    session = make_session(data, [
        *exchange("plan the database migration to PostgreSQL 16", "We will use alembic upgrade head."),
        *tool_round("read_file", {"path": "src/tui/app.py"}, "def parse_config(path):\n    return toml.load(path)",
                    "call-1"),
        *tool_round("run_command", {"command": "kubectl apply"}, "[preview only]", "call-9",
                    metadata={"deep_tui_evicted_path": str(saved)}),
        make_summary_message("## Session intent\nMigrate the schema; keep the rollback script.", strategy="summary",
                             kept_from=6, replaced=6),
    ])
    search = HistorySearch(data)
    assert found(search, "POSTGRESQL") == [(session, 0, "user")]
    assert found(search, "alembic upgrade") == [(session, 1, "assistant")]
    assert found(search, "tui/app.py") == [(session, 2, "tool call")]
    assert found(search, "arse_conf") == [(session, 3, "tool")]  # a fragment of an identifier
    assert found(search, "rollback script") == [(session, 6, "summary")]
    [saved_hit] = search.search("deploy/k8s/prod.yaml").hits
    assert (saved_hit.message, saved_hit.role, saved_hit.path) == (5, "saved output", str(saved))
    [hit] = search.search("migration postgresql").hits  # every word, in any order
    assert plain_snippet(hit.snippet) == "plan the database «migration» to «PostgreSQL» 16"
    assert hit.title == "plan the database migration to PostgreSQL 16"
    assert search.search("migration kubernetes").hits == []


def test_appends_are_indexed_incrementally_and_a_query_never_rebuilds(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    store = SessionStore(data)
    handle = store.create(model="offline")
    first = handle.append_messages(exchange("first question about tokenizers", "answer one"))
    assert search.record(handle.id, first, exchange("first question about tokenizers", "answer one"),
                         title=handle.meta.title, parent=None)
    assert doc_count(search) == 2
    turn = exchange("second question about lexers", "answer two")
    first = handle.append_messages(turn)
    assert search.record(handle.id, first, turn, title=handle.meta.title, parent=None)
    assert doc_count(search) == 4  # only the new messages were added
    [row] = read_rows(search.index.connection()).values()
    assert (row.indexed, row.size) == (4, handle.messages.path.stat().st_size)
    report = search.index.sync()
    assert report.indexed == [] and report.pending == []  # the disk pass finds nothing to redo
    assert found(search, "lexers") == [(handle.id, 2, "user")]
    handle.close()


def test_a_gap_is_left_to_the_disk_pass_which_catches_up_in_order(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("alpha bravo charlie", "delta echo"))
    search = HistorySearch(data)
    late = exchange("foxtrot golf", "hotel india")
    assert not search.record(session, 2, late, title="t", parent=None)  # 0..1 are not indexed: refuse the gap
    handle = SessionStore(data).open(session)
    handle.append_messages(late)
    handle.close()
    assert found(search, "foxtrot") == [(session, 2, "user")]  # the query's disk pass indexed 0..3
    assert doc_count(search, session) == 4


def test_missing_stale_and_corrupt_index_files_are_rebuilt_from_messages_json(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("the rotation happens on Fridays", "noted"))
    history = (data.session_dir(session) / "messages.json").read_bytes()
    search = HistorySearch(data)
    assert found(search, "fridays") == [(session, 0, "user")]
    search.index.close()
    index_file = data.root / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    assert found(HistorySearch(data), "fridays") == [(session, 0, "user")]  # missing: rebuilt

    connection = sqlite3.connect(index_file)
    connection.execute("PRAGMA user_version=1")  # an index written by another version of deep-tui
    connection.commit()
    connection.close()
    assert found(HistorySearch(data), "fridays") == [(session, 0, "user")]  # stale: rebuilt

    for suffix in ("-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    index_file.write_bytes(b"this is not a database" * 100)
    fresh = HistorySearch(data)
    outcome = fresh.search("fridays")
    assert [(hit.session, hit.message) for hit in outcome.hits] == [(session, 0)]
    assert read_rows(fresh.index.connection())[session].indexed == 2  # corrupt: removed and rebuilt
    assert (data.session_dir(session) / "messages.json").read_bytes() == history  # the source is untouched


def test_sessions_adopted_from_pydantic_deep_are_indexed_without_rewriting_them(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    adopted = data.sessions_dir / "deep0000abcd"
    adopted.mkdir(parents=True)
    exported = ModelMessagesTypeAdapter.dump_json(exchange("the legacy export mentions quasar", "ok"))
    (adopted / "messages.json").write_bytes(exported)  # one JSON array on one line, no session.json
    search = HistorySearch(data)
    [hit] = search.search("quasar").hits
    assert (hit.session, hit.message, hit.title) == ("deep0000abcd", 0, "the legacy export mentions quasar")
    assert (adopted / "messages.json").read_bytes() == exported
    assert not (adopted / "session.json").exists()


def test_a_fork_shares_its_parents_prefix_without_duplicate_hits(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    parent = make_session(data, [*exchange("the zebra protocol", "uses port 8443"),
                                 *exchange("parent only: walrus", "fine")])
    fork = fork_session(data, parent, 2, exchange("fork only: narwhal", "ok"))
    grandchild = fork_session(data, fork, 4, exchange("grandchild only: okapi", "ok"))
    [hit] = search.search("zebra").hits  # listed once, under the session that recorded it
    assert (hit.session, hit.message) == (parent, 0)
    assert set(hit.forks) == {fork, grandchild}
    assert search.search("walrus").hits[0].forks == ()  # recorded after the fork: not shared
    assert doc_count(search, fork) == 2 and doc_count(search, grandchild) == 2  # the prefixes are not re-indexed
    # A fork's own history includes what it copied.
    assert found(search, "zebra", session_id=grandchild) == [(parent, 0, "user")]
    assert found(search, "narwhal", session_id=grandchild) == [(fork, 2, "user")]
    assert found(search, "walrus", session_id=fork) == []
    assert found(search, "okapi", session_id=fork) == []


def test_deleting_a_parent_hands_the_shared_history_to_its_forks(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    parent = make_session(data, [*exchange("the zebra protocol", "uses port 8443")])
    fork = fork_session(data, parent, 2, exchange("fork only: narwhal", "ok"))
    assert search.search("zebra").hits[0].session == parent
    SessionStore(data).delete(parent)
    assert search.forget(parent)
    [hit] = search.search("zebra").hits
    assert (hit.session, hit.message, hit.forks) == (fork, 0, ())
    assert found(search, "narwhal") == [(fork, 2, "user")]
    assert doc_count(search, parent) == 0


def test_a_session_deleted_behind_the_index_is_dropped_and_renames_are_picked_up(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    keep = make_session(data, exchange("kept session mentions quokka", "ok"))
    gone = make_session(data, exchange("deleted session mentions quokka", "ok"))
    assert {hit.session for hit in search.search("quokka").hits} == {keep, gone}
    store = SessionStore(data)
    store.delete(gone)  # by another process: no forget() call
    store.rename(keep, "Quokka research")
    hits = search.search("quokka").hits
    assert [(hit.session, hit.title) for hit in hits] == [(keep, "Quokka research")]
    assert doc_count(search, gone) == 0
    assert search.rename(keep, "Renamed again")
    assert search.search("quokka").hits[0].title == "Renamed again"


def test_hostile_content_is_cleaned_and_saved_paths_outside_are_never_read(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch code is swordfish", encoding="utf-8")
    session = make_session(data, [
        ModelRequest(parts=[UserPromptPart("escape \x1b[31mred\x1b[0m and marks \x02tilt\x03 here")]),
        *tool_round("read_file", {"path": "x"}, "preview", "call-1", metadata={"deep_tui_evicted_path": str(secret)}),
    ])
    search = HistorySearch(data)
    assert search.search("swordfish").hits == []  # a path outside large_tool_results/ is not followed
    [hit] = search.search("tilt").hits
    assert "\x1b" not in hit.snippet and hit.snippet.count("\x02") == 1 and hit.session == session


def test_queries_too_short_or_empty_are_refused(tmp_path: Path) -> None:
    search = HistorySearch(data_dir(tmp_path))
    with pytest.raises(QueryTooShort):
        search.search("ab c")
    with pytest.raises(ValueError, match="empty"):
        search.search("   ")


def test_short_words_narrow_what_the_long_ones_found(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, [*exchange("deploy to eu region", "ok"), *exchange("deploy to us region", "ok")])
    assert found(HistorySearch(data), "deploy eu") == [(session, 0, "user")]


def test_the_index_lives_in_the_data_dir_and_holds_no_more_than_it_derives(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    make_session(data, exchange("hello index", "hi"))
    HistorySearch(data).refresh()
    connection = sqlite3.connect(data.root / "index.sqlite")
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "docs", "docs_fts"} <= tables
    tokenizer = connection.execute("SELECT sql FROM sqlite_master WHERE name='docs_fts'").fetchone()[0]
    assert "trigram" in tokenizer
    connection.close()
    assert json.loads((next(data.sessions_dir.iterdir()) / "session.json").read_text())["message_count"] == 2


def test_an_unlistable_sessions_directory_drops_nothing_from_the_index(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("kept through a bad listing", "ok"))
    search = HistorySearch(data)
    search.refresh()
    aside = tmp_path / "aside"
    data.sessions_dir.rename(aside)
    data.sessions_dir.write_text("not a directory")  # listing it fails (NotADirectoryError)
    report = search.index.sync()
    assert report.problem is not None and report.removed == 0
    assert session in read_rows(search.index.connection())
    data.sessions_dir.unlink()
    aside.rename(data.sessions_dir)
    assert search.index.sync().indexed == []  # nothing had to be indexed again
