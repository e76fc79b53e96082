"""Store benchmarks: appending a turn to long sessions, listing many sessions."""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import BenchResult, median_ms, result
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.messages_file import encode_message


def _turn(number: int) -> list[ModelMessage]:
    call_id = f"call-{number}"
    return [
        ModelRequest(parts=[UserPromptPart(f"question {number} " * 20)]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/module_{number}.py"}, call_id)]),
        ModelRequest(parts=[ToolReturnPart("read_file", f"line {number}\n" * 40, call_id)]),
    ]


def _session_with(store: SessionStore, count: int) -> str:
    handle = store.create(model="offline")
    lines = [encode_message(message) for number in range(count // 3 + 1) for message in _turn(number)][:count]
    handle.messages.path.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    handle.close()
    return handle.id


def _append_figure(store: SessionStore, count: int) -> BenchResult:
    session_id = _session_with(store, count)
    handle = store.open(session_id)
    handle.messages.count()  # the one-time scan happens when a session is opened
    turn = _turn(count)
    value = median_ms(lambda: handle.append_messages(turn), runs=50)
    handle.close()
    return result(f"append one turn to a {count:,}-message session", value, "ms", 1.0)


def main() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as directory:
        store = SessionStore(DataDir(Path(directory)))
        figures = [_append_figure(store, 1_000), _append_figure(store, 10_000)]
    with tempfile.TemporaryDirectory() as directory:
        store = SessionStore(DataDir(Path(directory)))
        for number in range(1_000):
            handle = store.create(model="offline")
            handle.append_messages(_exchange(number))  # a real session: a prompt and its answer
            handle.rename(f"session {number}")
            handle.close()
        figures.append(result("list 1,000 sessions", median_ms(store.list_sessions, runs=7), "ms", 150.0))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())


def _exchange(number: int) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
            ModelResponse(parts=[TextPart(f"answer {number}")])]
