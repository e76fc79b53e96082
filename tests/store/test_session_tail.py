"""The tail of ``messages.json`` read from its raw bytes: the last records, damage skipped, no pydantic-ai."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.base.paths import DataDir
from tui.store.session_store import SessionStore
from tui.store.session_tail import find_session_id, read_session_tail, read_tail_records

ROOT = Path(__file__).resolve().parents[2]


def _session(data: Path, count: int, *, text: str = "answer") -> str:
    handle = SessionStore(DataDir(data)).create(model="offline")
    messages: list[ModelMessage] = []
    for number in range(count // 2):
        messages += [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
                     ModelResponse(parts=[TextPart(f"{text} {number}")])]
    handle.append_messages(messages)
    handle.close()
    return handle.id


def _texts(records: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [str(record["parts"][0]["content"]) for record in records]


def test_the_last_records_in_order_across_chunk_boundaries(tmp_path: Path) -> None:
    session_id = _session(tmp_path, 2_000, text="answer " + "x" * 300)  # ~1 MB: many 64 KB chunks
    path = DataDir(tmp_path).session_dir(session_id) / "messages.json"
    assert path.stat().st_size > 10 * 64 * 1024
    records = read_tail_records(path, 21)
    assert _texts(records)[0] == "answer " + "x" * 300 + " 989"
    assert _texts(records)[-2:] == ["question 999", "answer " + "x" * 300 + " 999"]
    assert len(records) == 21
    assert read_tail_records(path, 5_000) == read_tail_records(path, 2_000)  # all of them, no more
    assert len(read_tail_records(path, 5_000)) == 2_000


def test_a_torn_tail_and_damaged_lines_are_skipped(tmp_path: Path) -> None:
    session_id = _session(tmp_path, 10)
    path = DataDir(tmp_path).session_dir(session_id) / "messages.json"
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines[-4] = b'{"parts":[{"content":"half a mess'  # "question 4", damaged (the last record is "answer 4")
    torn = b"\n".join(lines).removesuffix(b"\n]\n") + b',\n{"parts":[{"content":"torn by a cra'
    path.write_bytes(torn)
    assert _texts(read_tail_records(path, 3)) == ["question 3", "answer 3", "answer 4"]
    assert _texts(read_tail_records(path, 20))[-4:] == ["answer 2", "question 3", "answer 3", "answer 4"]
    assert len(read_tail_records(path, 20)) == 9


def test_unreadable_or_foreign_files_give_an_empty_tail(tmp_path: Path) -> None:
    assert read_tail_records(tmp_path / "missing.json", 5) == []
    foreign = tmp_path / "indented.json"
    foreign.write_text(json.dumps([{"kind": "request", "parts": [{"content": "hi", "part_kind": "user-prompt"}]}],
                                  indent=2))
    assert read_tail_records(foreign, 5) == []  # another layout: the real opening converts it
    binary = tmp_path / "binary.json"
    binary.write_bytes(os.urandom(200_000))
    assert read_tail_records(binary, 5) == []


def test_indices_and_title_come_from_session_json(tmp_path: Path) -> None:
    session_id = _session(tmp_path, 50)
    tail = read_session_tail(DataDir(tmp_path), session_id, 20)
    assert (tail.first_index, tail.total, len(tail.records)) == (30, 50, 20)
    assert tail.title == "question 0"
    (DataDir(tmp_path).session_dir(session_id) / "session.json").write_text("{not json")
    tail = read_session_tail(DataDir(tmp_path), session_id, 20)
    assert (tail.first_index, tail.title, len(tail.records)) == (None, None, 20)


def test_which_session_resume_and_continue_name(tmp_path: Path) -> None:
    data = DataDir(tmp_path)
    first = _session(tmp_path, 2)
    second = _session(tmp_path, 2)
    for session_id, updated in ((first, 1_000.0), (second, 2_000.0)):  # second is the newest
        meta_path = data.session_dir(session_id) / "session.json"
        meta = json.loads(meta_path.read_text())
        meta_path.write_text(json.dumps({**meta, "updated": updated}))
    assert find_session_id(data, resume=first, continue_latest=False) == first
    assert find_session_id(data, resume=second[:8], continue_latest=False) == second
    assert find_session_id(data, resume="zz", continue_latest=False) is None
    assert find_session_id(data, resume=None, continue_latest=True) == second
    assert find_session_id(data, resume=None, continue_latest=False) is None
    abandoned = SessionStore(data).create(model="offline")  # newest, empty: the store would clear it
    abandoned.close()
    assert find_session_id(data, resume=None, continue_latest=True) is None
    assert find_session_id(DataDir(tmp_path / "nothing"), resume="ab", continue_latest=True) is None


def test_reading_the_tail_and_drawing_it_never_loads_pydantic_ai(tmp_path: Path) -> None:
    session_id = _session(tmp_path, 40)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tui.base.paths import DataDir\n"
        "from tui.store.session_tail import read_session_tail\n"
        "from tui.app.widgets.tail_blocks import tail_blocks\n"
        "from tui.app.run import opening_tail\n"
        "import tui.app.app\n"
        f"tail = read_session_tail(DataDir(Path({str(tmp_path)!r})), {session_id!r}, 20)\n"
        "assert len(tail_blocks(tail)) == 20, len(tail_blocks(tail))\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] in ('pydantic_ai', 'pydantic'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
