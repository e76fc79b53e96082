"""Export (issue 33.2): ``deep-tui export`` of a 10,000-message session, Markdown and JSON, end to end —
reading messages.json, the todo list, redacting, rendering (target ≤ 2 s). A quarter of the turns call a tool,
one in eight of those outputs evicted, and a summary every 1,000 messages."""

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

from tui.base.metadata_keys import EVICTED_PATH_KEY, SAVED_CHARS_KEY
from tui.base.paths import DataDir
from tui.chain.summary_message import make_summary_message
from tui.cli.export_command import export_session
from tui.store import SessionStore

MESSAGES = 10_000


def _messages(count: int) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    turn = 0
    while len(messages) < count:
        turn += 1
        if len(messages) % 1000 == 999:
            messages.append(make_summary_message(f"## Session intent\nsummary {turn}\n" + "detail line\n" * 30,
                                                 strategy="summary", kept_from=len(messages) - 10, replaced=900))
            continue
        messages.append(ModelRequest(parts=[UserPromptPart(f"prompt {turn}: change the handler in src/m{turn}.py "
                                                           + "and explain why " * 10)]))
        if turn % 4 == 0:
            call = f"call-{turn}"
            messages.append(ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/m{turn}.py"}, call)]))
            metadata = ({EVICTED_PATH_KEY: f"/data/large_tool_results/{call}.txt", SAVED_CHARS_KEY: 90_000}
                        if turn % 32 == 0 else None)
            messages.append(ModelRequest(parts=[ToolReturnPart("read_file", "def handler():\n    pass\n" * 20, call,
                                                               metadata=metadata)]))
        messages.append(ModelResponse(parts=[TextPart(f"Done with turn {turn}. " + "The reason is this. " * 15)]))
    return messages[:count]


def main() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = DataDir(Path(tmp) / "data")
        store = SessionStore(data_dir)
        handle = store.create(model="openai-chat:bench")
        handle.append_messages(_messages(MESSAGES))
        session_id = handle.id
        handle.close()
        markdown = median_ms(lambda: export_session(data_dir, session_id, "md"), runs=5)
        as_json = median_ms(lambda: export_session(data_dir, session_id, "json"), runs=5)
    return [result(f"export {MESSAGES:,} messages as Markdown", markdown / 1000, "s", 2.0),
            result(f"export {MESSAGES:,} messages as JSON", as_json / 1000, "s", 2.0)]


if __name__ == "__main__":
    from common import report

    report(main())
