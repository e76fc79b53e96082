"""Task-state retention (issue 30): a scripted 40-turn session in an 8k window with several summaries.

The model writes a 7-item todo list at turn 3 and updates it as it goes; the user adds two ``/keep`` lines
(turns 5 and 12). Every tool-reading turn grows the context, so the chain evicts, compacts and summarizes
many times. Figures: the share of later requests that carry the current list and both lines byte for byte
(target 100 %), requests over the window (target 0, measured as an OpenAI payload: ``fuzzfarm.wire``), and
the summaries written (for scale).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # fuzzfarm, when run on its own

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from common import BenchResult, floor, info, result
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from fuzzfarm.wire import request_size
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.tasks.render import todo_line
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent, CompactionFinished
from tui.store.task_state import TodoItem, todo_list

TURNS = 40
WINDOW = 8_000
KEEP = {5: "never touch migrations/", 12: "answer in English, in at most five lines"}
TODO_TURN = 3


def _todos(done: int) -> list[dict[str, str]]:
    """The 7-item list with ``done`` items completed and the next one in progress."""
    steps = ["Read the module layout", "Find the failing parser test", "Reproduce the failure",
             "Fix the tokenizer's escape handling", "Run the whole test suite", "Update the changelog",
             "Write the summary for the user"]
    return [{"content": step, "status": "completed" if n < done else ("in_progress" if n == done else "pending"),
             "active_form": f"Working on: {step.lower()}"} for n, step in enumerate(steps)]


@dataclass
class Script:
    """The scripted model: a read_file per turn, write_todos at turn 3 and every 6 turns after; every request
    checked against the list it last wrote and the lines the user added."""

    turn: int = 0
    written: tuple[TodoItem, ...] | None = None
    kept: list[str] = field(default_factory=list)
    checked: int = 0
    carried: int = 0
    over_window: int = 0
    largest: int = 0
    misses: list[str] = field(default_factory=list)

    def check(self, messages: list[ModelMessage], info: AgentInfo) -> None:
        size = request_size(messages, info.instructions, info.function_tools, 1.0)
        self.largest = max(self.largest, size)
        if size > WINDOW:
            self.over_window += 1
        if self.written is None:
            return
        self.checked += 1
        text = info.instructions or ""
        expected = [todo_line(item) for item in self.written] + [f"- {line}" for line in self.kept]
        missing = [line for line in expected if line not in text]
        if missing:
            self.misses.append(f"turn {self.turn}: {missing[0]!r}")
        else:
            self.carried += 1

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        self.check(messages, info)
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        names = {p.tool_name for p in returns}
        if "read_file" in names and (self.turn == TODO_TURN or (self.turn > TODO_TURN and self.turn % 6 == 3)):
            todos = _todos(min(7, (self.turn - TODO_TURN) // 6 + 1))
            self.written = todo_list(todos)
            yield {0: DeltaToolCall(name="write_todos", json_args=json.dumps({"todos": todos}),
                                    tool_call_id=f"todo-{self.turn}")}
            return
        if returns:
            yield f"turn {self.turn}: looked at part {self.turn % 5} of the parser; nothing else to change."
            return
        yield {0: DeltaToolCall(name="read_file", json_args=json.dumps({"path": f"part{self.turn % 5}.txt"}),
                                tool_call_id=f"read-{self.turn}")}


async def _session(root: Path) -> tuple[Script, int]:
    work = root / "work"
    work.mkdir()
    for number in range(5):
        (work / f"part{number}.txt").write_text("".join(f"parser line {number}.{line}: tokens = scan(text, {line})\n"
                                                        for line in range(120)))
    script = Script()
    settings = Settings(context=ContextSettings(window=WINDOW))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(root / "data"), workdir=work,
                             choice=choose_model("offline", None),
                             chat_model=FunctionModel(stream_function=script.stream, model_name="scripted"))
    runtime = await factory.open_request(SessionRequest())
    summaries = 0

    def count(event: ChainEvent) -> None:
        nonlocal summaries
        if isinstance(event, CompactionFinished) and event.strategy == "summary":
            summaries += 1

    runtime.subscribe(count)
    try:
        for turn in range(1, TURNS + 1):
            script.turn = turn
            if turn in KEEP:
                runtime.add_keep(KEEP[turn])
                script.kept.append(KEEP[turn])
            [_ async for _ in runtime.run_turn(f"turn {turn}: keep going with the parser fix")]
    finally:
        await runtime.aclose()
    return script, summaries


def main() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as directory:
        script, summaries = asyncio.run(_session(Path(directory)))
    retention = 100.0 * script.carried / script.checked if script.checked else 0.0
    figures = [
        floor(f"task state: later requests carrying the list and both /keep lines ({script.checked} checked)",
              retention, "%", 100.0),
        result("task state: requests over the 8k window", script.over_window, "req", 0),
        info("  for scale: summaries written in the 40 turns", summaries, "sum"),
        info("  for scale: the largest request (OpenAI payload)", script.largest, "tok"),
    ]
    for miss in script.misses[:3]:
        print(f"  missed at {miss}")
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
