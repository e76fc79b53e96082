"""The lean index (issue 23): no positions, every candidate checked on its text, exact matches found through
the words table however old, and an index from an older deep-tui rebuilt with its progress shown."""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path

import pytest
from textual.app import App

from tests.search.support import data_dir, exchange, make_session, tool_round
from tui.app.index_notes import IndexNotes
from tui.base.metadata_keys import EVICTED_PATH_KEY
from tui.base.paths import DataDir
from tui.cli.main import main
from tui.store.search import searcher as search_module
from tui.store.search.candidates import build_match
from tui.store.search.database import PAGE_SIZE, SCHEMA_VERSION, TOKENIZERS
from tui.store.search.queries import matching_sessions
from tui.store.search.scan import all_targets, scan
from tui.store.search.searcher import HistorySearch, IndexingProgress, SearchCancelled
from tui.store.search.terms import parse_query, query_terms


def _substring_matches(data: DataDir, query: str) -> set[tuple[str, int]]:
    return {(hit.session, hit.message) for hit in scan(data, all_targets(data), query_terms(query), limit=10**6)}


def _found(search: HistorySearch, query: str) -> set[tuple[str, int]]:
    return {(hit.session, hit.message) for hit in search.search(query, limit=10**6).hits}


def test_the_index_keeps_no_positions_and_its_text_apart(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    make_session(data, exchange("hello layout", "hi"))
    HistorySearch(data).refresh()
    connection = sqlite3.connect(data.root / "index.sqlite")
    schema = dict(connection.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall())
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    connection.close()
    assert "detail=none" in schema["docs_fts"] and "trigram" in schema["docs_fts"]
    assert "detail=none" in schema["words_fts"] and "tokenchars '_'" in schema["words_fts"]
    assert "body" not in schema["docs"] and "body" in schema["texts"]
    assert version == SCHEMA_VERSION * 100 + TOKENIZERS["trigram"]


def test_a_piece_holding_every_trigram_but_not_the_word_is_not_a_hit(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    # Every three-letter slice of parse_config, and of "retry budget", but neither as typed.
    decoy = make_session(data, exchange("parse_args then load_config, use_c and e_co", "retry the budget; try bud"))
    real = make_session(data, exchange("cfg = parse_config(path)", "a retry budget of 3"))
    for query in ("parse_config", '"retry budget"', "parse_config retry"):
        assert _found(search, query) == _substring_matches(data, query)
    assert {session for session, _ in _found(search, "parse_config")} == {real}
    assert decoy not in {hit.session for hit in search.search('"retry budget"').hits}
    search.index.close()


def test_words_in_identifiers_phrases_cjk_pairs_and_saved_outputs_are_found_exactly(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    saved = data.large_results_dir / "call-9-output.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("line 1\nrequest e7f3a9c0d15b2864 finished\n", encoding="utf-8")
    sessions = [
        make_session(data, exchange("rename just_semaphore_next to something", "done: JustSemaphoreNext")),
        make_session(data, exchange("東京の支店で会議があります", "京都に行きます")),
        make_session(data, exchange("the retry budget is spent", "budget retry is not the phrase")),
        make_session(data, tool_round("grep", {"pattern": "x"}, "[output saved]\npreview: line 1", "call-9",
                                      metadata={EVICTED_PATH_KEY: str(saved)})),
    ]
    search = HistorySearch(data)
    for query in ("semaphore_next", "SEMAPHORE", '"retry budget"', "東京", "京都", "e7f3a9c0d15b2864", "next"):
        expected = _substring_matches(data, query)
        assert expected and _found(search, query) == expected, query
    saved_hit = search.search("e7f3a9c0d15b2864").hits[0]
    assert saved_hit.session == sessions[3] and saved_hit.path == str(saved)
    assert "\x02e7f3a9c0d15b2864\x03" in saved_hit.snippet  # highlighted
    search.index.close()


def test_an_old_exact_match_outranks_hundreds_of_newer_matches_inside_longer_words(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    exact = make_session(data, exchange("cfg = parse_config(path)", "ok"), search=search)
    for number in range(160):  # 320 newer pieces, each holding parse_config inside reparse_config_cache
        make_session(data, exchange(f"reparse_config_cache {number}", f"reparse_config_cache again {number}"),
                     search=search)
    hits = search.search("parse_config", limit=3).hits
    assert hits[0].session == exact and hits[0].message == 0
    search.index.close()


def test_words_next_to_symbols_are_words_for_the_exact_shortcut(tmp_path: Path) -> None:
    """``timeout=30`` and ``$timeout|retry`` hold the word ``timeout`` (symbols separate words, as for
    ``\\w``): the words table must find them, or a query that stops once the words table gave enough exact
    matches would rank a weaker one first."""
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    dense = make_session(data, exchange("timeout=30 then timeout=40 and $timeout|retry", "ok"), search=search)
    make_session(data, exchange("the timeout " + "and some other words " * 60, "ok"), search=search)
    assert [(hit.session, hit.message) for hit in search.search("timeout", limit=1).hits] == [(dense, 0)]
    search.index.close()


def test_the_picker_finds_the_first_sessions_in_its_order_and_says_when_it_counted_only_some(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    sessions = [make_session(data, exchange(f"the walrus_ledger entry {number}", "noted")) for number in range(6)]
    sessions += [make_session(data, exchange("walrus and ledger, apart", "no match here"))]
    search = HistorySearch(data)
    search.refresh()
    order = list(reversed(sessions))
    connection = search.index.connection()
    match = build_match(parse_query("walrus_ledger"), search.tokenizer)
    counted = matching_sessions(connection, match, order=order, limit=2, budget=0)
    assert list(counted.newest) == order[1:3]  # the decoy (listed first) holds every trigram but not the word
    assert counted.unchecked > 0 and 2 <= counted.matching < 6  # "or more": not every session was checked
    whole = matching_sessions(connection, match, order=order, limit=2)
    assert whole.matching == 6 and whole.unchecked == 0 and list(whole.newest) == order[1:3]
    with pytest.raises(SearchCancelled):  # a newer keystroke: the picker's stale search stops
        search.session_hits("walrus_ledger", order=order, limit=2, cancelled=lambda: True)
    outcome = search.session_hits("walrus_ledger", order=order, limit=2, cancelled=lambda: False)
    assert list(outcome.by_session) == order[1:3] and outcome.matching_sessions == 6
    search.index.close()


def _write_version_2_index(path: Path) -> None:
    """An index as deep-tui wrote it before this layout (positions, text inside ``docs``)."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA page_size=4096")
    connection.execute("PRAGMA journal_mode=WAL")  # as deep-tui keeps it: VACUUM alone keeps the page size
    connection.executescript("""
        CREATE TABLE sessions(id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', parent TEXT,
            own_from INTEGER NOT NULL DEFAULT 0, indexed INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL DEFAULT -1,
            mtime_ns INTEGER NOT NULL DEFAULT 0, meta_mtime_ns INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE docs(id INTEGER PRIMARY KEY, session TEXT NOT NULL, message INTEGER NOT NULL, role TEXT NOT NULL,
            tool TEXT, path TEXT, body BLOB NOT NULL);
        CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='', tokenize='trigram');
        CREATE VIRTUAL TABLE cjk_fts USING fts5(grams, content='', tokenize='unicode61');
        CREATE TABLE checks(name TEXT PRIMARY KEY, at REAL NOT NULL);
        PRAGMA user_version=201;
    """)
    connection.commit()
    connection.close()


def test_an_index_from_an_older_deep_tui_is_rebuilt_showing_why_and_how_far(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = data_dir(tmp_path)
    session = make_session(data, exchange("the otter_ledger was rebuilt", "ok"))
    _write_version_2_index(data.root / "index.sqlite")
    monkeypatch.setattr(search_module, "INDEXING_NOTE_BYTES", 1)
    assert main(["search", "--data-dir", str(data.root), "otter_ledger"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(session)
    assert re.search(r"deep-tui: indexing 0 MB of history for search \(the index was made by another version of "
                     r"deep-tui\)\n", err)
    assert re.search(r"deep-tui: indexed 0 MB in [0-9.]+ s\n", err)
    connection = sqlite3.connect(data.root / "index.sqlite")
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    connection.close()
    assert {"texts", "words_fts"} <= tables and page_size == PAGE_SIZE and journal == "wal"

    assert main(["search", "--data-dir", str(data.root), "otter_ledger"]) == 0  # up to date now: nothing to say
    assert capsys.readouterr().err == ""


def test_a_large_background_build_is_announced_in_the_app_and_its_end_too() -> None:
    class Host(App[None]):
        pass

    async def scenario() -> list[str]:
        app = Host()
        async with app.run_test() as pilot:
            notes = IndexNotes(app)

            def build() -> None:  # the index's thread
                notes(IndexingProgress(0, 104_000_000, 0.0, "the index was made by another version of deep-tui"))
                notes(IndexingProgress(52_000_000, 104_000_000, 0.0))
                notes(None)

            worker = threading.Thread(target=build)
            worker.start()
            while worker.is_alive():
                await pilot.pause(0.01)
            worker.join()
            await pilot.pause()
            return [notification.message for notification in app._notifications]

    import asyncio

    messages = asyncio.run(scenario())
    assert len(messages) == 2
    assert messages[0].startswith("Search: indexing 104 MB of history for search (the index was made by another "
                                  "version of deep-tui) in the background")
    assert messages[1].startswith("Search: the index is up to date")
