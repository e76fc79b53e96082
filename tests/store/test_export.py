"""``deep-tui export`` (issue 33.2): a session as Markdown or JSON — prompts, answers, tool calls with their
arguments, previews and saved paths, a divider per summary, the todo list; secrets redacted, hostile text
defused. The Markdown and JSON of a fixed session are compared with snapshots in export_snapshots/ (written
when missing, or with DEEP_TUI_UPDATE_EXPORT_SNAPSHOTS=1; look at them before committing)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.base.metadata_keys import EVICTED_PATH_KEY, SAVED_CHARS_KEY
from tui.base.paths import DataDir
from tui.chain.summary_message import make_summary_message
from tui.cli.main import main
from tui.store import SessionStore
from tui.store.export import read_document, render_json, render_markdown
from tui.store.meta import SessionMeta

SNAPSHOTS = Path(__file__).parent / "export_snapshots"
KEY = "sk-export-test-0123456789abcdef"


def conversation() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart("read the config and fix the port")]),
        ModelResponse(parts=[TextPart("Reading it."), ToolCallPart("read_file", {"path": "app.toml"}, "call-1")]),
        ModelRequest(parts=[ToolReturnPart("read_file", f"port = 80\napi_key = \"{KEY}\"\n", "call-1")]),
        ModelResponse(parts=[ToolCallPart("grep", {"pattern": "port"}, "call-2")]),
        ModelRequest(parts=[ToolReturnPart("grep", "[The whole output of grep was saved … preview: app.toml:1 port]",
                                           "call-2", metadata={EVICTED_PATH_KEY: "/data/large_tool_results/call-2.txt",
                                                               SAVED_CHARS_KEY: 48213})]),
        ModelResponse(parts=[TextPart("The port is **80**; a fence ``` inside and an escape \x1b]0;title\x07 too.")]),
        make_summary_message("## Session intent\nfix the port\n\n## Files\n- app.toml", strategy="summary",
                             kept_from=6, replaced=6),
        ModelRequest(parts=[UserPromptPart("now set it to 8080")]),
        ModelResponse(parts=[TextPart("Done: port = 8080.")]),
    ]


def fixed_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (tmp_path / "todos.json").write_text(json.dumps([
        {"content": "find the port", "status": "completed"},
        {"content": "set it to 8080", "status": "in_progress"},
        {"content": "restart", "status": "pending"},
    ]), encoding="utf-8")
    meta = SessionMeta(id="0123456789ab", title="fix the port", created=1_790_000_000.0, updated=1_790_000_600.0,
                       message_count=9, model="openai-chat:gpt-4.1")
    return read_document(meta, conversation(), tmp_path)


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if not path.exists() or os.environ.get("DEEP_TUI_UPDATE_EXPORT_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; see the diff"


def test_markdown_export_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = render_markdown(fixed_document(tmp_path, monkeypatch))
    check_snapshot("session.md", text)
    assert KEY not in text and "[redacted]" in text
    assert "\x1b" not in text and "␛" in text
    assert "`/data/large_tool_results/call-2.txt`, 48,213 characters" in text
    assert "**Context compacted:** 6 earlier messages summarized" in text
    assert "- [x] find the port (completed)" in text and "- [ ] restart (pending)" in text


def test_json_export_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = render_json(fixed_document(tmp_path, monkeypatch))
    check_snapshot("session.json", text)
    data = json.loads(text)
    assert data["version"] == 1 and data["session"]["id"] == "0123456789ab"
    kinds = [entry["kind"] for entry in data["entries"]]
    assert kinds == ["prompt", "answer", "tool_call", "tool_call", "answer", "summary", "prompt", "answer"]
    [_, grep] = [entry for entry in data["entries"] if entry["kind"] == "tool_call"]
    assert grep["args"] == '{"pattern":"port"}' and grep["saved_path"] == "/data/large_tool_results/call-2.txt"
    assert data["entries"][0]["index"] == 0
    assert len(data["todos"]) == 3 and KEY not in text


def test_a_bad_or_linked_todo_list_is_left_out(tmp_path: Path) -> None:
    meta = SessionMeta(id="x")
    (tmp_path / "todos.json").write_text("{not json", encoding="utf-8")
    assert read_document(meta, [], tmp_path).todos == []
    (tmp_path / "todos.json").unlink()
    (tmp_path / "elsewhere.json").write_text('[{"content": "planted", "status": "pending"}]', encoding="utf-8")
    (tmp_path / "todos.json").symlink_to(tmp_path / "elsewhere.json")
    assert read_document(meta, [], tmp_path).todos == []


def test_export_command_prints_or_writes_the_newest_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("alpha line\n", encoding="utf-8")
    assert main(["run", "--model", "offline", "read", "notes.txt"]) == 0
    capsys.readouterr()
    assert main(["export"]) == 0
    out = capsys.readouterr().out
    assert "## You · message 0" in out and "**Tool call** `read_file`" in out and "alpha line" in out
    target = tmp_path / "out" / "session.json"
    assert main(["export", "--format", "json", "-o", str(target)]) == 0
    assert f"to {target}" in capsys.readouterr().err
    assert json.loads(target.read_text(encoding="utf-8"))["entries"][0]["text"] == "read notes.txt"


def test_export_of_an_unknown_session_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["export"]) == 2
    assert "no sessions" in capsys.readouterr().err
    SessionStore(DataDir(tmp_path / ".deep-tui")).create()
    assert main(["export", "zzzz"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
