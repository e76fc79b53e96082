"""Sessions adopted from pydantic-deep are read in place: listing, search and indexing never rewrite
their messages.json, and "updated" is when a session was last used, never when a file was read."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from tests.search.support import exchange, tool_round
from tui.base.paths import DataDir
from tui.cli.main import main
from tui.store.cost_totals import CostTotals
from tui.store.search.searcher import HistorySearch
from tui.store.session_store import SessionStore

TWO_DAYS = 2 * 24 * 3600


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_info:
        code = int(exit_info.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def adopt(data: DataDir, session_id: str, prompt: str, *, age: float) -> Path:
    """A pydantic-deep session folder: only messages.json, an indent=2 JSON array, last written ``age`` ago."""
    messages = [*exchange(prompt, "done: see the walrus_ledger"),
                *tool_round("read_file", {"path": "ledger.py"}, "class WalrusLedger: ...", "c1")]
    directory = data.session_dir(session_id)
    directory.mkdir(parents=True)
    path = directory / "messages.json"
    path.write_text(json.dumps(ModelMessagesTypeAdapter.dump_python(messages, mode="json"), indent=2))
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_listing_search_and_indexing_leave_adopted_histories_untouched_and_continue_picks_the_latest(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "my own latest work on the walrus")
    assert code == 0, err
    data = DataDir(workdir / ".deep-tui")
    [mine] = [path.name for path in data.sessions_dir.iterdir()]
    adopted = [adopt(data, f"deep{number:08d}", f"adopted walrus question {number}", age=TWO_DAYS + number)
               for number in range(3)]
    before = [fingerprint(path) for path in adopted]
    assert all(path.read_bytes().startswith(b"[\n  {") for path in adopted)

    code, out, _ = run(capsys, "sessions", "--json")
    assert code == 0
    listed = json.loads(out)
    assert listed[0]["id"] == mine  # newest first: the user's own session
    for row in listed[1:]:
        assert row["updated"] < time.time() - TWO_DAYS + 60  # when pydantic-deep last wrote it, not now
        assert row["messages"] == 4 and row["title"].startswith("adopted walrus question")
    assert run(capsys, "sessions")[0] == 0
    code, out, _ = run(capsys, "search", "walrus_ledger")
    assert code == 0 and all(path.parent.name in out for path in adopted)
    search = HistorySearch(data)
    search.refresh(check=True)
    assert {hit.session for hit in search.search("WalrusLedger").hits} == {path.parent.name for path in adopted}
    search.index.close()

    assert [fingerprint(path) for path in adopted] == before  # same bytes, same mtime
    assert not any(path.with_name("messages.json.orig").exists() for path in adopted)

    code, _, err = run(capsys, "run", "--continue", "and one more")
    assert code == 0, err
    prompts = [part.content for message in SessionStore(data).open(mine, read_only=True).messages.load().messages
               for part in message.parts if part.part_kind == "user-prompt"]
    assert prompts == ["my own latest work on the walrus", "and one more"]
    assert [fingerprint(path) for path in adopted] == before


def test_opening_an_adopted_session_converts_it_keeping_the_original(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    path = adopt(data, "deep00000001", "convert me when opened", age=TWO_DAYS)
    original = path.read_bytes()
    handle = SessionStore(data).open("deep00000001")
    try:
        assert handle.messages.count() == 4
    finally:
        handle.close()
    assert path.with_name("messages.json.orig").read_bytes() == original
    assert path.read_bytes().startswith(b'[\n{"parts":[')


def test_sessions_json_gives_null_usd_when_nothing_could_be_priced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = DataDir(tmp_path / "data")
    store = SessionStore(data)
    unpriced, priced = store.create(model="local:llama3"), store.create(model="openai:gpt-5")
    unpriced.append_messages(exchange("hello", "hi"))
    unpriced.meta.cost = CostTotals(unpriced_requests=3)
    unpriced.meta.write(unpriced.meta_path)
    priced.append_messages(exchange("hello", "hi"))
    priced.meta.cost = CostTotals(input_usd=0.25, output_usd=0.5, requests=2, unpriced_requests=1)
    priced.meta.write(priced.meta_path)
    unpriced.close()
    priced.close()
    code, out, _ = run(capsys, "sessions", "--data-dir", str(data.root), "--json")
    costs = {row["id"]: row["cost"] for row in json.loads(out)}
    assert code == 0
    assert costs[unpriced.id]["usd"] is None and costs[unpriced.id]["output_usd"] is None
    assert costs[unpriced.id]["label"] == "price unknown" and costs[unpriced.id]["unpriced_requests"] == 3
    assert costs[priced.id]["usd"] == 0.75 and costs[priced.id]["label"].startswith("≥")
    code, out, _ = run(capsys, "sessions", "--data-dir", str(data.root))
    assert "price unknown" in out
