"""The picker's content query narrows its candidates with the index's word list, and stays exact: every
session holding what was typed is found (inside longer identifiers too, in sessions indexed after the
list was read, past FTS5's cut of a very long word), and nothing that merely holds its trigrams."""

from __future__ import annotations

from pathlib import Path

from tests.search.support import data_dir, exchange, make_session
from tui.store.search.candidates import build_match, candidate_sessions
from tui.store.search.searcher import HistorySearch
from tui.store.search.terms import parse_query


def _ready(tmp_path: Path) -> tuple[HistorySearch, dict[str, str]]:
    data = data_dir(tmp_path)
    sessions = {
        "exact": make_session(data, exchange("call parse_config(path) here", "ok")),
        "inside": make_session(data, exchange("the reparse_config_cache is warm", "ok")),
        "slices": make_session(data, exchange("parse_args, use_cache, load_config", "both hold the slices, not the name")),
        "upper": make_session(data, exchange("PARSE_CONFIG shouted", "ok")),
        "dotted": make_session(data, exchange("see src/app.py line 3", "ok")),
        "kelvin": make_session(data, exchange("a value of 30\u212aelvin_scale", "ok")),
        "dotted_i": make_session(data, exchange("the word apİ ends in a capital dotted I", "ok")),
    }
    search = HistorySearch(data)
    search.refresh()
    assert search.read_word_list()
    return search, sessions


def _found(search: HistorySearch, query: str) -> set[str]:
    return set(search.session_hits(query).by_session)


def test_word_list_finds_exact_and_inner_matches_and_drops_trigram_lookalikes(tmp_path: Path) -> None:
    search, sessions = _ready(tmp_path)
    match = build_match(parse_query("parse_config"), search.tokenizer)
    connection = search.index.connection()
    trigram_sessions = {session for _, session in candidate_sessions(connection, match)}
    assert sessions["slices"] in trigram_sessions  # the trigram index alone would have it checked
    narrowed = search._narrowed(connection, match, {row.id: row for row in _rows(search)})
    assert narrowed is not None and sessions["slices"] not in {session for _, session in narrowed}
    assert _found(search, "parse_config") == {sessions["exact"], sessions["inside"], sessions["upper"]}
    assert _found(search, "config_cache") == {sessions["inside"]}
    assert _found(search, "app.py") == {sessions["dotted"]}
    assert _found(search, "kelvin_scale") == {sessions["kelvin"]}  # U+212A folds to k on both sides
    assert _found(search, "api") == {sessions["dotted_i"]}  # İ folds to i + a dot: "apİ" holds "api"
    assert _found(search, "the_return") == set()


def test_sessions_indexed_after_the_list_are_found_through_the_trigram_index(tmp_path: Path) -> None:
    search, _ = _ready(tmp_path)
    later = make_session(search.data_dir, exchange("a fresh_parse_config_loader appears", "ok"), search=search)
    vocabulary = search._vocabulary
    assert vocabulary is not None and "fresh_parse_config_loader" not in vocabulary.folded
    assert later in _found(search, "parse_config")
    assert later in _found(search, "config_loader")
    assert _found(search, "config_loader") == {later}


def test_a_word_longer_than_fts5_keeps_is_still_searched_past_the_cut(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    long_word = "ab" * 20_000 + "_needle_tail"
    holder = make_session(data, exchange(f"dump {long_word} end", "ok"))
    make_session(data, exchange("nothing here", "ok"))
    search = HistorySearch(data)
    search.refresh()
    assert search.read_word_list()
    assert search._vocabulary is not None and search._vocabulary.long_prefixes
    assert _found(search, "needle_tail") == {holder}


def test_the_list_is_read_in_the_background_and_queries_answer_meanwhile(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    holder = make_session(data, exchange("call parse_config(path)", "ok"))
    search = HistorySearch(data)
    assert search.prepare_session_search() is None  # no index yet: nothing to read
    assert _found(search, "parse_config") == {holder}  # the trigram path; it starts the reading
    reader = search._vocabulary_reader
    assert reader is not None
    reader.join(10)
    assert search._vocabulary is not None
    assert _found(search, "parse_config") == {holder}


def _rows(search: HistorySearch):  # type: ignore[no-untyped-def]
    from tui.store.search.database import read_rows

    return read_rows(search.index.connection()).values()
