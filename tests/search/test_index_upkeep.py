"""The index survives the project folder moving, finds damage anywhere in its file, shows progress
while it is rebuilt, and ``deep-tui search`` against an up-to-date index does not load pydantic-ai."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.search.support import exchange, make_session, tool_round
from tui.base.paths import DataDir
from tui.cli.main import main
from tui.store.search import searcher as search_module
from tui.store.search.database import Database
from tui.store.search.scan import all_targets, scan
from tui.store.search.searcher import HistorySearch
from tui.store.search.terms import query_terms

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_info:
        code = int(exit_info.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_saved_outputs_stay_findable_after_the_project_folder_moves(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "project" / ".deep-tui")
    saved = data.large_results_dir / "call-3-xyz.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("header\n" * 40 + "only the saved output says quetzalcoatl_overflow\n", encoding="utf-8")
    session = make_session(data, tool_round("run_command", {"command": "make"}, "[saved]", "call-3",
                                            metadata={"deep_tui_evicted_path": str(saved)}))
    search = HistorySearch(data)
    [hit] = search.search("quetzalcoatl_overflow").hits
    assert (hit.session, hit.role, hit.path) == (session, "saved output", str(saved))
    stored = sqlite3.connect(data.root / "index.sqlite").execute("SELECT path FROM docs WHERE path IS NOT NULL")
    assert stored.fetchall() == [("large_tool_results/call-3-xyz.txt",)]  # relative to the data directory
    search.index.close()

    (tmp_path / "project").rename(tmp_path / "renamed")  # messages.json still names the old absolute path
    moved = DataDir(tmp_path / "renamed" / ".deep-tui")
    (moved.root / "index.sqlite").unlink()  # rebuilt: after a delete, damage or a schema change
    search = HistorySearch(moved)
    [hit] = search.search("quetzalcoatl_overflow").hits
    assert (hit.session, hit.role, hit.path) == (session, "saved output", str(moved.large_results_dir / saved.name))
    search.index.close()
    [scanned] = scan(moved, all_targets(moved), query_terms("quetzalcoatl_overflow"), limit=5)
    assert scanned.path == hit.path


def test_a_saved_output_path_outside_the_saved_outputs_folder_is_not_read(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    secret = tmp_path / "secret.txt"
    secret.write_text("the password is hunter2hunter2", encoding="utf-8")
    escape = data.large_results_dir / ".." / ".." / "secret.txt"
    make_session(data, tool_round("read_file", {"path": "x"}, "[saved]", "c1",
                                  metadata={"deep_tui_evicted_path": str(escape)}))
    make_session(data, tool_round("read_file", {"path": "y"}, "[saved]", "c2",
                                  metadata={"deep_tui_evicted_path": str(secret)}))
    assert HistorySearch(data).search("hunter2hunter2").hits == []


def _damage_middle(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(os.urandom(6 * 4096))


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[DataDir, list[str]]:
    data = DataDir(tmp_path / "data")
    sessions = [make_session(data, [*exchange(f"session {number} about the pelican_gateway", "noted " * 200),
                                    *tool_round("read_file", {"path": f"src/m{number}.py"},
                                                "\n".join(f"line {line} of module {number} with a long tail of text"
                                                          for line in range(300)), f"c{number}")])
                for number in range(24)]
    search = HistorySearch(data)
    search.refresh()
    search.index.close()
    assert (data.root / "index.sqlite").stat().st_size > 200_000
    return data, sessions


def test_damage_anywhere_in_the_index_is_found_by_the_check_and_the_index_rebuilt(
        indexed: tuple[DataDir, list[str]]) -> None:
    data, sessions = indexed
    _damage_middle(data.root / "index.sqlite")
    search = HistorySearch(data)
    problem = search.index.check()
    assert problem is not None and problem.kind == "corrupt" and "damaged" in str(problem)
    assert not (data.root / "index.sqlite").exists()  # removed: it is derived data
    outcome = search.search("pelican_gateway", limit=50)
    assert {hit.session for hit in outcome.hits} == set(sessions) and outcome.notice is None
    assert search.index.check() is None  # the rebuilt file is sound
    search.index.close()


def test_deep_tui_search_checks_the_index_once_a_day_and_rebuilds_a_damaged_one_showing_progress(
        indexed: tuple[DataDir, list[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data, sessions = indexed
    with sqlite3.connect(data.root / "index.sqlite") as connection:  # last found sound two days ago
        connection.execute("UPDATE checks SET at = at - 2 * 86400")
    connection.close()
    _damage_middle(data.root / "index.sqlite")
    monkeypatch.setattr(search_module, "INDEXING_NOTE_BYTES", 1)
    code, out, err = run(capsys, "search", "--data-dir", str(data.root), "--limit", "50", "pelican_gateway")
    assert code == 0 and sum(line.startswith(tuple(sessions)) for line in out.splitlines()) == 24
    assert "search index" in err and "damaged" in err and "rebuilding it" in err
    assert re.search(r"deep-tui: indexing [01] MB of history for search \(the index was damaged\)\n", err)
    assert re.search(r"deep-tui: indexed [01] MB in [0-9.]+ s\n", err)

    checks: list[str] = []
    original = Database.quick_check

    def counted(self: Database, connection: sqlite3.Connection) -> str | None:
        checks.append("ran")
        return original(self, connection)

    monkeypatch.setattr(Database, "quick_check", counted)
    code, _, err = run(capsys, "search", "--data-dir", str(data.root), "pelican_gateway")
    assert code == 0 and checks == [] and err == ""  # checked a moment ago: not again today


def test_deep_tui_search_on_an_up_to_date_index_does_not_import_pydantic_ai(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    session = make_session(data, exchange("where did the heron_protocol go?", "into src/heron.py"))
    search = HistorySearch(data)
    search.refresh(check=True)
    search.index.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "tui.cli", "search", "--data-dir",
                           str(data.root), "heron_protocol"], capture_output=True, text=True, env=env, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(session)
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "tui.store.search.searcher" in imported and "sqlite3" in imported
    assert not [name for name in imported if name.startswith(("pydantic", "pydantic_ai", "textual"))]
