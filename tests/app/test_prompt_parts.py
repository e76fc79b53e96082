"""The pieces behind the prompt and the title bar: history file, command ranking, fitting the title."""

from __future__ import annotations

import json
from pathlib import Path

from tui.agent.runtime_api import ContextBreakdown, ContextSlice, RuntimeInfo
from tui.app.command_registry import closest, rank, unknown_command_message
from tui.app.screens.compact_dialog import describe_result
from tui.app.screens.context_report import breakdown_lines
from tui.app.widgets.chat_blocks import DividerInfo
from tui.app.widgets.title_bar import title_parts
from tui.chain.events import CompactionFinished
from tui.store.prompt_history import MAX_ENTRIES, PromptHistory


def test_history_appends_skips_repeats_survives_a_torn_line_and_is_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "prompt_history.jsonl"
    history = PromptHistory.load(path)
    for text in ("one", "two", "two", "multi\nline", "  "):
        history.add(text)
    assert history.entries == ["one", "two", "multi\nline"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write('"cut by a cra')  # a crash in the middle of a line
    assert PromptHistory.load(path).entries == ["one", "two", "multi\nline"]
    big = PromptHistory.load(path)
    for number in range(2 * MAX_ENTRIES + 5):
        big.add(f"prompt {number}")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 2 * MAX_ENTRIES and json.loads(lines[-1]) == f"prompt {2 * MAX_ENTRIES + 4}"
    assert PromptHistory.load(path).entries[-1] == f"prompt {2 * MAX_ENTRIES + 4}"
    assert len(PromptHistory.load(path)) == MAX_ENTRIES


def test_a_fork_inherits_its_parents_history_and_writes_its_own_file(tmp_path: Path) -> None:
    parent = tmp_path / "parent" / "prompt_history.jsonl"
    parent.parent.mkdir()
    PromptHistory.load(parent).add("from the parent")
    child = tmp_path / "child" / "prompt_history.jsonl"
    child.parent.mkdir()
    history = PromptHistory.load(child, inherit_from=parent)
    assert history.entries == ["from the parent"] and not child.exists()
    history.add("in the fork")
    assert PromptHistory.load(child).entries == ["from the parent", "in the fork"]
    assert PromptHistory.load(parent).entries == ["from the parent"]


def test_a_missing_session_directory_keeps_the_entry_in_memory(tmp_path: Path) -> None:
    history = PromptHistory.load(tmp_path / "gone" / "prompt_history.jsonl")
    history.add("still here")
    assert history.entries == ["still here"]


def test_ranking_puts_name_matches_first() -> None:
    assert [command.name for command, _ in rank("context")][:2] == ["context", "compact"]
    assert [command.name for command, _ in rank("/comp")][:1] == ["compact"]
    assert [command.name for command, _ in rank("window")] == ["context"]  # found in its description only
    assert rank("co", descriptions=False)[0][0].name in ("compact", "context")
    assert closest("/contxt")[0].name == "context"
    assert "did you mean /help" in unknown_command_message("/hlep me")


def test_counts_read_in_the_singular() -> None:
    finished = CompactionFinished(strategy="summary", trigger="manual", tokens_before=900, tokens_after=300,
                                  messages_replaced=1)
    assert "(1 message replaced" in str(describe_result(finished))
    divider = DividerInfo(strategy="summary", replaced=1, tokens_before=None, tokens_after=None, retention=None,
                          focus=None, summary="", replaced_range=None)
    assert divider.title().startswith("summarized 1 message")
    report = ContextBreakdown(window=1000, window_source="config", slices=(ContextSlice("tool definitions", 10),),
                              compaction_threshold=0.85, summarize_threshold=0.9, message_count=1, compressions=1)
    text = str(breakdown_lines(report))
    assert "1 compaction so far" in text and "1 message," in text


def test_the_title_keeps_model_and_offline_at_80_columns() -> None:
    info = RuntimeInfo(session_id="0123456789ab", title="make the tokenizer handle CRLF in every file", model_name="offline",
                       offline=True, parent="fedcba987654")
    wide = str(title_parts(info, 160))
    assert all(part in wide for part in ("fork of fedcba98", "0123456789ab", "no LLM configured", "CRLF in every"))
    narrow = str(title_parts(info, 78))
    assert len(narrow) <= 78
    assert "deep-tui" in narrow and "offline" in narrow and "type help" in narrow and "make the" in narrow
    assert "0123456789ab" not in narrow
