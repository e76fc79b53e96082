"""``deep-tui search`` and the cost column of ``deep-tui sessions``, in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.search.support import exchange, fork_session, make_session, tool_round
from tui.base.paths import DataDir
from tui.cli.main import main
from tui.store.cost_totals import CostTotals
from tui.store.search.searcher import HistorySearch
from tui.store.session_store import SessionStore


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_info:
        code = int(exit_info.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path: Path) -> DataDir:
    return DataDir(tmp_path / "data")


def test_search_prints_ranked_hits_with_session_message_role_and_snippet(
        data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    first = make_session(data, [*exchange("where is the retry budget set?", "In src/net/retry.py: RETRY_BUDGET = 5"),
                                *tool_round("grep", {"pattern": "RETRY_BUDGET"}, "src/net/retry.py:12: RETRY_BUDGET = 5",
                                            "call-1")], title="Retry budget")
    fork = fork_session(data, first, 2)
    code, out, err = run(capsys, "search", "--data-dir", str(data.root), "retry_budget")
    assert code == 0 and err == ""
    heads = [line for line in out.splitlines() if line.startswith(first)]
    assert f"{first}  message 4      tool grep         Retry budget" in heads
    assert f"{first}  message 3      tool call grep    Retry budget" in heads
    assert len(heads) == 3 and "«RETRY_BUDGET»" in out and out.count("also in fork: " + fork) == 1
    assert (data.root / "index.sqlite").is_file()

    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "--json", "--limit", "1", "budget", "set?")
    [record] = json.loads(out)
    assert code == 0 and record["session"] == first and record["message"] == 1 and record["role"] == "user"
    assert record["snippet"] == "where is the retry budget set?" and "«budget» «set?»" in record["highlighted"]
    assert isinstance(record["score"], float)

    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "--session", fork[:6], "--json", "RETRY_BUDGET")
    assert code == 0 and [(hit["session"], hit["message"]) for hit in json.loads(out)] == [(first, 2)]  # inherited


def test_search_exit_status_and_errors(data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    make_session(data, exchange("hello there", "hi"))
    code, out, err = run(capsys, "search", "--data-dir", str(data.root), "nowhere-to-be-found")
    assert (code, out) == (1, "") and "no matches for 'nowhere-to-be-found' in any session" in err
    code, _, err = run(capsys, "search", "--data-dir", str(data.root), "hi")
    assert code == 2 and "deep-tui: error: a search needs a word of at least 3 characters" in err
    code, _, err = run(capsys, "search", "--data-dir", str(data.root), "--session", "zzz", "hello")
    assert code == 2 and "no session matches 'zzz'" in err
    code, _, err = run(capsys, "search", "--data-dir", str(data.root), "--limit", "0", "hello")
    assert code == 2 and "--limit must be at least 1" in err


def test_search_says_when_the_index_cannot_be_used(data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    session = make_session(data, exchange("the emerald key", "ok"))
    (data.root / "index.sqlite").mkdir()  # not a database and not removable as a file
    code, out, err = run(capsys, "search", "--data-dir", str(data.root), "emerald")
    assert code == 0 and out.startswith(session)
    assert "deep-tui: note: the search index" in err and "searched 1 session directly" in err


def test_sessions_lists_cost_and_keeps_the_index_in_step(data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    store = SessionStore(data)
    handle = store.create(model="anthropic:claude-sonnet-4-5")
    handle.append_messages(exchange("a priced session about cobalt", "ok"))
    totals = CostTotals()
    totals.add(input_usd=0.03, cached_input_usd=0.002, output_usd=0.01)
    totals.add_unpriced()
    handle.record_cost(totals)
    handle.close()
    older = store.create(model="anthropic:claude-sonnet-4-5")  # a real model, but no cost recorded
    older.append_messages(exchange("an older session about cobalt", "ok"))
    older.close()
    unrecorded = older.id
    code, out, _ = run(capsys, "sessions", "--data-dir", str(data.root))
    assert code == 0 and "COST" in out.splitlines()[0]
    assert "≥$0.04" in next(line for line in out.splitlines() if line.startswith(handle.id))
    assert "   –  " in next(line for line in out.splitlines() if line.startswith(unrecorded))
    code, out, _ = run(capsys, "sessions", "--data-dir", str(data.root), "--json")
    records = {record["id"]: record for record in json.loads(out)}
    assert records[handle.id]["cost"]["usd"] == pytest.approx(0.042)
    assert records[handle.id]["cost"]["unpriced_requests"] == 1 and not records[handle.id]["cost"]["complete"]
    assert records[unrecorded]["cost"] is None

    search = HistorySearch(data)
    assert len(search.search("cobalt").hits) == 2
    assert run(capsys, "sessions", "--data-dir", str(data.root), "rename", unrecorded[:6], "Cobalt", "notes")[0] == 0
    assert run(capsys, "sessions", "--data-dir", str(data.root), "delete", handle.id, "--yes")[0] == 0
    rows = search.index.connection().execute("SELECT id, title FROM sessions").fetchall()
    assert rows == [(unrecorded, "Cobalt notes")]  # updated by the commands themselves, before any search


def test_an_offline_session_costs_nothing_and_says_so(data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    offline = make_session(data, exchange("an offline session", "ok"))
    code, out, _ = run(capsys, "sessions", "--data-dir", str(data.root))
    assert code == 0 and "free (offline)" in next(line for line in out.splitlines() if line.startswith(offline))


def test_search_output_never_carries_terminal_escapes(data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    session = make_session(data, exchange("evil \x1b]0;pwned\x07 title \x9b31m with garnet", "ok"))
    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "garnet")
    assert code == 0 and out.startswith(session)
    assert not any(character in out for character in "\x1b\x07\x9b")


def test_search_starts_from_the_data_dir_alone(data: DataDir, tmp_path: Path) -> None:
    """Issue 29 §21: `deep-tui search` reads no config, project trust or model — not even a broken config.toml
    stops it — and loads neither pydantic-ai nor Textual (its start-up is most of its time; the figure is in
    bench/bench_search.py)."""
    import subprocess
    import sys

    make_session(data, exchange("where is parse_config?", "in src/config.py"))
    HistorySearch(data).refresh()  # an up-to-date index (indexing a new history parses it with pydantic-ai)
    (data.root / "config.toml").write_text("this is [not toml\n", encoding="utf-8")
    probe = ("import sys\nfrom tui.cli.main import main\ncode = main(sys.argv[1:])\n"
             "loaded = sorted({m.split('.')[0] if not m.startswith('tui.') else '.'.join(m.split('.')[:3])"
             " for m in sys.modules})\nprint('LOADED', *loaded, file=sys.stderr)\nraise SystemExit(code)")
    done = subprocess.run([sys.executable, "-c", probe, "search", "--data-dir", str(data.root), "parse_config"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "where is «parse_config»?" in done.stdout
    loaded = set(done.stderr.split("LOADED", 1)[1].split())
    assert not loaded & {"pydantic_ai", "pydantic", "textual", "tui.cli.launch", "tui.trust.project",
                         "tui.base.config", "tui.agent", "tui.app"}, loaded
