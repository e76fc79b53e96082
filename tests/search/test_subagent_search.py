"""A subagent's history (``sessions/<id>/subagents/<n>/messages.json``) is in the cross-session search index
(issue 32.1): ``deep-tui search`` and the picker's search find it, a hit names the session it belongs to (its
title) and the subagent, opening it opens that session, and a subagent that ran later is picked up."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage

from tests.app.app_support import make_app, make_factory
from tests.search.support import exchange, make_session
from tests.search.test_picker_search import option_texts, type_query, until
from tests.search.test_search_cli import run
from tui.agent.tools.history_search import format_outcome
from tui.app.screens.session_list import SessionList
from tui.app.screens.session_picker import SessionPickerScreen
from tui.base.paths import DataDir
from tui.store.search.database import read_rows
from tui.store.search.searcher import HistorySearch
from tui.store.subagent_histories import SubagentHistories

SIZE = (120, 36)


def add_subagent(data: DataDir, session_id: str, messages: Sequence[ModelMessage]) -> int:
    """A subagent of ``session_id`` whose history holds ``messages``, as the task tool records one."""
    history = SubagentHistories(data.session_dir(session_id)).create()
    history.messages.append(list(messages))
    history.close()
    return history.number


@pytest.fixture
def data(tmp_path: Path) -> DataDir:
    return DataDir(tmp_path / "data")


def test_deep_tui_search_finds_a_subagents_history_and_names_its_session(
        data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_session(data, exchange("look into the flaky build", "A subagent read the log."), title="Flaky build")
    other = make_session(data, exchange("unrelated", "nothing here"), title="Other work")
    add_subagent(data, other, exchange("read nothing", "nothing to see"))
    number = add_subagent(data, parent, exchange("read build.log", "the zebracorn step timed out at 14:02"))
    code, out, err = run(capsys, "search", "--data-dir", str(data.root), "zebracorn")
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith(f"{parent}/subagents/{number}  message 2  ")
    assert out.splitlines()[0].endswith("Flaky build")  # the session it belongs to, by its title
    assert "the «zebracorn» step timed out" in out
    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "--json", "zebracorn")
    [record] = json.loads(out)
    assert (record["session"], record["subagent"], record["message"]) == (parent, number, 2)
    search = HistorySearch(data)
    try:  # found through the index, not a scan: the subagent's history is a row of its own
        rows = read_rows(search.index.connection())
        assert f"{parent}/subagents/{number}" in rows and f"{other}/subagents/1" in rows
    finally:
        search.index.close()


def test_a_subagent_that_ran_later_is_picked_up_and_a_deleted_session_takes_its_subagents(
        data: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_session(data, exchange("first task", "done"), title="Long session")
    add_subagent(data, parent, exchange("early work", "the early answer"))
    assert run(capsys, "search", "--data-dir", str(data.root), "early answer")[0] == 0
    later = add_subagent(data, parent, exchange("later work", "the quokkaphant was found in vendor/"))
    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "quokkaphant")
    assert code == 0 and out.startswith(f"{parent}/subagents/{later}  message 2")
    search = HistorySearch(data)
    try:
        assert search.forget(parent)
        assert not [key for key in read_rows(search.index.connection()) if key.startswith(parent)]
    finally:
        search.index.close()


def test_a_planted_link_to_a_subagents_folder_is_not_followed(data: DataDir, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_session(data, exchange("a task", "done"))
    outside = tmp_path / "outside" / "1"
    outside.mkdir(parents=True)
    source = data.session_dir(make_session(data, exchange("secret", "the marmosaurus secret")))
    (outside / "messages.json").write_bytes((source / "messages.json").read_bytes())
    os.symlink(outside.parent, data.session_dir(parent) / "subagents")
    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "--json", "marmosaurus")
    assert code == 0 and [hit["subagent"] for hit in json.loads(out)] == [None]  # only the real session's


async def test_the_pickers_search_shows_a_subagents_hit_and_opens_its_session(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    handle.append_messages(exchange("delegate the audit", "The subagent found it."))
    handle.rename("Audit")
    handle.close()
    add_subagent(factory.data_dir, handle.id, exchange("audit vendor/", "the ocelotbridge dependency is unpinned"))
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await type_query(app, pilot, "ocelotbridge")
        [text] = option_texts(app)
        assert "Audit" in text and "subagent 1 · message 2 · assistant" in text and "ocelotbridge" in text
        await pilot.click(SessionList, offset=(20, 1))  # the row's snippet line
        await until(pilot, lambda: not isinstance(app.screen, SessionPickerScreen)
                    and app.runtime.info.session_id == handle.id)


def test_when_the_index_cannot_be_used_the_scan_reads_subagents_too(data: DataDir) -> None:
    parent = make_session(data, exchange("a task", "handed to a subagent"), title="Scanned")
    number = add_subagent(data, parent, exchange("dig", "the pangolinwire answer"))
    builder = HistorySearch(data)
    builder.refresh()
    builder.index.close()
    holder = sqlite3.connect(data.root / "index.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another deep-tui holds the index: the files are read directly
    try:
        search = HistorySearch(data)
        search.busy_ms = 50
        outcome = search.search("pangolinwire")
        assert outcome.notice is not None and "locked by another deep-tui" in outcome.notice
        assert [(hit.owner, hit.subagent, hit.message, hit.title) for hit in outcome.hits] == [
            (parent, number, 1, "Scanned")]
        assert search.session_hits("pangolinwire").by_session[parent].subagent == number
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_the_agents_tool_names_another_sessions_subagent_and_how_to_read_it(data: DataDir) -> None:
    parent = make_session(data, exchange("a task", "delegated"), title="Elsewhere")
    number = add_subagent(data, parent, exchange("look", "the wombatlantern is in vendor/"))
    current = make_session(data, exchange("now", "here"))
    search = HistorySearch(data)
    try:
        outcome = search.search("wombatlantern")
        text = format_outcome(outcome, "wombatlantern", scope="all", current=current)
    finally:
        search.index.close()
    assert f'message 2 · assistant · subagent {number} of session {parent[:8]} "Elsewhere"' in text
    assert f'read_conversation_message(message=2, session="{parent[:8]}", subagent={number})' in text
