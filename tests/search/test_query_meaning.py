"""Queries mean what was typed, exact matches come first, and the same query always gives the same
answer without looking at every session folder."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.search.support import data_dir, exchange, make_session, tool_round
from tui.store.search import searcher as search_module
from tui.store.search.database import read_rows
from tui.store.search.index import SearchIndex
from tui.store.search.queries import build_match, ranked_hits
from tui.store.search.scan import all_targets, scan
from tui.store.search.searcher import HistorySearch
from tui.store.search.terms import exactness, fold, parse_query, query_terms

PASTED = 'logger.debug("%s fixed", handler)'


def test_query_terms_are_taken_literally() -> None:
    assert query_terms(r"C:\Users\build\agent.log") == [r"C:\Users\build\agent.log"]
    assert query_terms(PASTED) == ['logger.debug("%s', 'fixed",', "handler)"]
    assert parse_query(PASTED).text == PASTED
    assert query_terms('"retry  budget" set') == ["retry budget", "set"]
    assert query_terms('"quoted"') == ["quoted"]
    assert query_terms('say "unbalanced') == ["say", '"unbalanced']
    assert query_terms("東京 tower") == ["東京", "tower"]


def test_exactness_tiers() -> None:
    assert exactness(fold("call parse_config() now"), parse_query("parse_config")) == 0
    assert exactness(fold("reparse_config_cache"), parse_query("parse_config")) == 2
    assert exactness(fold("TokenRefreshSchedulerFactory"), parse_query("TokenRefreshScheduler")) == 2
    assert exactness(fold("retry the budget"), parse_query("budget retry")) == 1
    assert exactness(fold(f"    {PASTED}\n"), parse_query(PASTED)) == 0


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[HistorySearch, dict[str, str]]:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    sessions = {
        "path": make_session(data, tool_round("read_file", {"path": r"C:\Users\build\agent.log"},
                                              r"opened C:\Users\build\agent.log: 12 lines", "c1")),
        "pasted": make_session(data, tool_round("read_file", {"path": "fix.py"},
                                                f"def fix(handler):\n    {PASTED}\n", "c2")),
        "scattered": make_session(data, exchange("the handler is fixed", 'see logger.debug("%s here) later')),
        "cjk": make_session(data, exchange("東京に行きました", "京都ではなく東京です")),
        "kyoto": make_session(data, exchange("京都に行きました", "ok")),
    }
    return search, sessions


def test_backslashes_quotes_and_two_character_cjk_words_are_found(corpus: tuple[HistorySearch, dict[str, str]]) -> None:
    search, sessions = corpus
    assert {hit.session for hit in search.search(r"C:\Users\build\agent.log").hits} == {sessions["path"]}
    pasted = search.search(PASTED).hits
    assert pasted[0].session == sessions["pasted"]  # the whole line as typed first
    assert {hit.session for hit in search.search("東京").hits} == {sessions["cjk"]}
    assert {hit.message for hit in search.search("東京", limit=5).hits} == {0, 1}
    assert {hit.session for hit in search.search("京都").hits} == {sessions["cjk"], sessions["kyoto"]}
    assert search.search("東京 ました").hits[0].session == sessions["cjk"]
    picked = search.session_hits("東京")  # the picker's content search too
    assert list(picked.by_session) == [sessions["cjk"]] and picked.matching_sessions == 1
    # The linear scan (used when the index cannot be) means the same.
    targets = all_targets(search.data_dir)
    assert {hit.session for hit in scan(search.data_dir, targets, query_terms("東京"), limit=10)} == {sessions["cjk"]}
    assert {hit.session for hit in scan(search.data_dir, targets, query_terms(r"C:\Users\build\agent.log"),
                                        limit=10)} == {sessions["path"]}


def test_exact_identifier_matches_outrank_substring_matches(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    for number in range(5):  # short messages, the word twice: bm25 alone ranks these first
        make_session(data, exchange(f"reparse_config_cache {number}", "reparse_config_cache again"))
        make_session(data, exchange(f"TokenRefreshSchedulerFactory {number}", "TokenRefreshSchedulerFactory"))
    exact = make_session(data, exchange("A longer message where the function parse_config reads the file, "
                                        "and then TokenRefreshScheduler starts with the parsed settings.", "ok"))
    for query in ("parse_config", "TokenRefreshScheduler"):
        hits = search.search(query, limit=10).hits
        assert len(hits) == 10 and hits[0].session == exact, query
    phrase = make_session(data, exchange("x", "we retry the budget here"))
    make_session(data, exchange("budget", "retry"))
    assert search.search('"retry the budget"').hits[0].session == phrase


def test_the_same_query_gives_the_same_answer_however_slow_the_machine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = data_dir(tmp_path)
    for number in range(30):
        make_session(data, exchange(f"timeout {number} " + "timeout " * (number % 7), f"def handler_{number}(): pass"))
    index = SearchIndex(data)
    index.sync()
    connection = index.connection()
    rows = read_rows(connection)
    match = build_match(parse_query("timeout"), index.db.tokenizer)
    first = ranked_hits(connection, match, rows, session_id=None, limit=5, candidates=12)
    clock = [time.perf_counter()]

    def crawling() -> float:  # every reading of the clock an hour later: any time budget would run out
        clock[0] += 3600
        return clock[0]

    monkeypatch.setattr(time, "perf_counter", crawling)
    monkeypatch.setattr(time, "monotonic", crawling)
    for _ in range(3):
        again = ranked_hits(connection, match, rows, session_id=None, limit=5, candidates=12)
        assert [(hit.session, hit.message, hit.score) for hit in again] == \
            [(hit.session, hit.message, hit.score) for hit in first]
    assert all(hit.score is not None for hit in first) and len(first) == 5
    index.close()


def test_a_query_does_not_look_at_every_session_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = data_dir(tmp_path)
    search = HistorySearch(data)
    for number in range(5):
        make_session(data, exchange(f"otter number {number}", "ok"), search=search)
    assert len(search.search("otter").hits) == 5  # the first query of a process catches up with the disk
    walks: list[object] = []
    original = SearchIndex.disk_sessions

    def counted(self: SearchIndex, only: object = None) -> object:
        walks.append(only)
        return original(self, only)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchIndex, "disk_sessions", counted)
    for _ in range(5):
        assert len(search.search("otter").hits) == 5
    assert walks == []  # none per query
    live = make_session(data, exchange("otter from the live session", "ok"), search=search)  # recorded as appended
    assert live in {hit.session for hit in search.search("otter", limit=10).hits}
    assert walks == [None]  # one look, because a session folder was created since the last
    for _ in range(3):
        assert len(search.search("otter", limit=10).hits) == 6
    assert walks == [None]
    monkeypatch.setattr(search_module, "REFRESH_AFTER", 0.0)
    search.search("otter")  # an old look: refreshed in the background, the query does not wait for it
    assert search._background is not None
    search._background.join(10)
    assert len(walks) == 2
    search.index.close()
