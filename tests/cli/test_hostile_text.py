"""Hostile text never reaches the terminal raw, and bad Unicode never crashes a turn (issue 8, item 6).

``deep-tui run`` against the loopback OpenAI chat server, whose reply carries ESC[2J, OSC 52
(clipboard), OSC 0 (title), a C1 CSI and a lone surrogate, and whose tool call has a hostile id
and reads a file full of escape codes. The process is real; its stdout and stderr are read as bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.support.openai_server import ChatServerState, openai_chat_server

HOSTILE_CHUNKS = ["clear \x1b[2J", " clip \x1b]52;c;aGVsbG8=\x07", " title \x1b]0;owned\x07", " c1 \x9b2J",
                  " lone \ud800 surrogate", " tab\tkept\nnext line"]
HOSTILE_ID = "../../x\x1b[2J" + "y" * 400
RAW_CONTROLS = (b"\x1b", b"\xc2\x9b", b"\x07", b"\xed\xa0\x80")  # ESC, C1 CSI, BEL, a surrogate's bytes


def _run(tmp_path: Path, state: ChatServerState, prompt: bytes, *, config: str = "") -> subprocess.CompletedProcess[bytes]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    with openai_chat_server(state) as (base_url, _server):
        (data / "config.toml").write_text(f'base_url = "{base_url}"\n{config}', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
        return subprocess.run(
            [os.fsencode(sys.executable), b"-m", b"tui.cli", b"run", b"--data-dir", os.fsencode(data),
             b"--model", b"openai-chat:gpt-4.1", prompt],
            cwd=tmp_path, env=env, capture_output=True, timeout=120,
        )


def _recorded(tmp_path: Path) -> list:  # type: ignore[type-arg]
    [session] = list((tmp_path / "data" / "sessions").iterdir())
    return list(ModelMessagesTypeAdapter.validate_json((session / "messages.json").read_bytes()))


def test_run_prints_escape_codes_as_pictures_and_records_the_answer(tmp_path: Path) -> None:
    completed = _run(tmp_path, ChatServerState(content_chunks=HOSTILE_CHUNKS), b"say it")
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    for raw in RAW_CONTROLS:
        assert raw not in completed.stdout and raw not in completed.stderr, raw
    shown = completed.stdout.decode("utf-8")
    assert "clear ␛[2J clip ␛]52;c;aGVsbG8=␇ title ␛]0;owned␇" in shown
    assert "tab\tkept\nnext line" in shown
    last = _recorded(tmp_path)[-1]
    assert isinstance(last, ModelResponse)
    text = "".join(part.content for part in last.parts if isinstance(part, TextPart))
    assert "clear \x1b[2J" in text, "the record keeps the model's bytes; only the display is defused"
    assert "lone \ufffd surrogate" in text and "\ud800" not in text


def test_run_with_invalid_utf8_in_the_prompt_records_it_and_answers(tmp_path: Path) -> None:
    completed = _run(tmp_path, ChatServerState(reply="fine"), b"bad \xff byte")
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    assert completed.stdout.decode("utf-8").strip() == "fine"
    prompts = [part.content for message in _recorded(tmp_path) if isinstance(message, ModelRequest)
               for part in message.parts if isinstance(part, UserPromptPart)]
    assert prompts == ["bad \ufffd byte"]


def test_a_hostile_tool_call_and_file_cannot_escape_or_reach_stderr(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("".join(f"line {n} \x1b[2J\x1b]0;pwned\x07 \x9b31m\n" for n in range(200)),
                                       encoding="utf-8")
    state = ChatServerState(content_chunks=["read ", "it"], tool_calls=[
        (HOSTILE_ID, "read_file", '{"path": "evil.txt"}'),
        ("call-\x1b]52;c;eA==\x07", "read_file", '{"path": "../../../etc/\\u001b[2Jpasswd"}'),
        ("call-4", "no_such_tool\x1b]0;title\x07", '{}'),
        ("call-3", "edit_file", '{"path": "no\\u001b]0;title\\u0007such.txt", "old_text": "a", "new_text": "b"}'),
    ])
    completed = _run(tmp_path, state, b"read evil.txt", config="[context]\nlarge_result_tokens = 500\n")
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    for raw in RAW_CONTROLS:
        assert raw not in completed.stdout and raw not in completed.stderr, raw
    errors = completed.stderr.decode("utf-8")
    assert "evicted" in errors and "tool edit_file failed" in errors
    assert "tool no_such_tool␛]0;title␇ failed" in errors
    saved = list((tmp_path / "data" / "large_tool_results").iterdir())
    assert len(saved) == 1 and "\x1b" not in saved[0].name and len(saved[0].name) < 200
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "evil.txt"], "nothing written outside"
    assert not (tmp_path.parent / "x").exists()


def test_sessions_and_search_print_hostile_titles_and_text_as_pictures(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                       capsysbinary) -> None:
    from tui.base.paths import DataDir
    from tui.cli.main import main
    from tui.store.session_store import SessionStore

    monkeypatch.chdir(tmp_path)
    data = DataDir(tmp_path / "data")
    store = SessionStore(data)
    handle = store.create(model="offline")
    handle.append_messages([ModelRequest(parts=[UserPromptPart("needle \x1b]0;owned\x07 \x9b2J prompt")]),
                            ModelResponse(parts=[TextPart("needle answer \x1b[2J")])])
    handle.close()
    meta_path = data.session_dir(handle.id) / "session.json"  # a title tampered with on disk
    meta_path.write_text(meta_path.read_text(encoding="utf-8").replace('"title": "', '"title": "\\u001b]52;c;eA==\\u0007', 1),
                         encoding="utf-8")
    assert main(["sessions", "--data-dir", str(data.root)]) == 0
    assert main(["search", "needle", "--data-dir", str(data.root)]) == 0
    printed = capsysbinary.readouterr()
    for raw in RAW_CONTROLS:
        assert raw not in printed.out and raw not in printed.err, raw
    assert "␛]52;c;eA==␇" in printed.out.decode("utf-8")
