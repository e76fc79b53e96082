"""Frame cost of a streaming answer against what is already in the chat (headless app, FunctionModel).

Issue 9: each frame costs O(new text), not O(chat) — a session with hundreds of answers on screen renders as
fast as an empty one, and tool output blocks (large previews, many tool calls in one turn) follow the same rule.
The same answer (prose and a long list) streams in three chats: an empty one, one with 400 answers mounted (every
page loaded), and a turn that first made 150 tool calls with large previews. Per frame, the time spent drawing the
turn's queued events (``LiveTurn._draw``) plus the screen's layout and paint (``Screen``'s update timer) until the
next frame is one frame's cost; the figure is the median frame in the full chat over the median in the empty one.

``python bench/bench_chat_scale.py`` runs it alone; ``make bench`` runs it with the rest.
"""

from __future__ import annotations

import asyncio
import bisect
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pydantic_ai  # noqa: E402
from common import BenchResult, info, result  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel  # noqa: E402
from textual.screen import Screen  # noqa: E402

from tui.agent.models.choice import choose_model  # noqa: E402
from tui.agent.session.factory import RuntimeFactory, SessionRequest  # noqa: E402
from tui.app.app import DeepTuiApp  # noqa: E402
from tui.app.widgets.chat_view import ChatView  # noqa: E402
from tui.app.widgets.live_turn import LiveTurn  # noqa: E402
from tui.base.config import Settings  # noqa: E402
from tui.base.paths import DataDir  # noqa: E402
from tui.store.messages_file import encode_message  # noqa: E402

pydantic_ai.BANNER_ENABLED = False
RATIO_TARGET = 1.25
ANSWERS_ON_SCREEN = 400
TOOL_CALLS = 150
BATCHES = 300
"""Deltas of the streamed answer, one every 4 ms (about 15 deltas a frame)."""


def _answer(shape: str) -> list[str]:
    if shape == "list":
        return [f"- item {n} with a few more words\n" * 2 for n in range(BATCHES)]
    return [f" word{n} " * 4 + ("\n\n" if n % 10 == 9 else "") for n in range(BATCHES)]


def _model(shape: str, tool_calls: int) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if tool_calls and not any(isinstance(part, ToolCallPart) for message in messages
                                  if isinstance(message, ModelResponse) for part in message.parts):
            yield {n: DeltaToolCall("read_file", '{"path": "big.txt", "limit": 400}', tool_call_id=f"call-{n}")
                   for n in range(tool_calls)}
            return
        for delta in _answer(shape):
            await asyncio.sleep(0.004)
            yield delta

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("x")]), stream_function=stream,
                         model_name="scale")


def _factory(root: Path, model: FunctionModel) -> RuntimeFactory:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "big.txt").write_text("".join(f"line {n} of a large file, long enough to fill a preview\n"
                                          for n in range(2_000)))
    return RuntimeFactory(settings=Settings(), data_dir=DataDir(root / "data"), workdir=work,
                          choice=choose_model("offline", None), chat_model=model)


def _history(factory: RuntimeFactory, answers: int) -> str:
    handle = factory.store.create(model="offline")
    lines = []
    for number in range(answers):
        lines.append(encode_message(ModelRequest(parts=[UserPromptPart(f"question {number}")])))
        lines.append(encode_message(ModelResponse(parts=[TextPart(f"answer **{number}**\n\n- a point\n- another\n")])))
    handle.messages.path.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    handle.close()
    return handle.id


def _timed(owner: type, name: str, samples: list[tuple[float, float]]) -> Callable[[], None]:
    """Record (start, duration in ms) of every call of ``owner.name`` into ``samples``; returns the undo."""
    original = getattr(owner, name)
    if asyncio.iscoroutinefunction(original):
        async def timed_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(self, *args, **kwargs)
            finally:
                samples.append((start, (time.perf_counter() - start) * 1000))
        setattr(owner, name, timed_async)
    else:
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                samples.append((start, (time.perf_counter() - start) * 1000))
        setattr(owner, name, timed)
    return lambda: setattr(owner, name, original)


async def _frames_ms(root: Path, shape: str, *, answers: int = 0, tool_calls: int = 0) -> float:
    """The median frame while the answer streams: drawing the turn's events plus the screen updates that follow
    until the next frame, in ms."""
    factory = _factory(root, _model(shape, tool_calls))
    session = _history(factory, answers) if answers else None
    runtime = factory.open_request_sync(SessionRequest(resume=session))
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    draws: list[tuple[float, float]] = []
    updates: list[tuple[float, float]] = []
    answer_started: list[tuple[float, float]] = []
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        chat = app.query_one(ChatView)
        while await chat.load_earlier():
            pass
        await pilot.pause(0.3)
        undo = [_timed(LiveTurn, "_draw", draws), _timed(Screen, "_on_timer_update", updates),
                _timed(ChatView, "start_answer", answer_started)]
        try:
            app.main_screen.run_turn("go")
            await pilot.pause(0.05)
            while app.runtime.busy or any(worker.group == "turn" and worker.is_running for worker in app.workers):
                await asyncio.sleep(0.01)
        finally:
            for step in undo:
                step()
        await pilot.pause()
        mounted = len(list(chat.query("*")))
    await app.runtime.aclose()
    if answers:
        assert mounted > answers, "every page of the history is mounted"
    # From the first frame after the answer began: the tool blocks' own frames (mounting them) are not counted.
    since = answer_started[0][0] if answer_started else 0.0
    frames = [[start, duration] for start, duration in draws if start > since]
    for start, duration in updates:  # each screen update belongs to the frame drawn last before it
        owner = bisect.bisect_right([frame[0] for frame in frames], start) - 1
        if owner >= 0:
            frames[owner][1] += duration
    return statistics.median(duration for _, duration in frames) if frames else float("nan")


def main() -> list[BenchResult]:
    figures: list[BenchResult] = []
    for shape in ("prose", "list"):
        with tempfile.TemporaryDirectory() as directory:  # a first run loads what answers need (Markdown, Pygments)
            asyncio.run(_frames_ms(Path(directory) / "warm-up", shape))
        with tempfile.TemporaryDirectory() as directory:
            empty = asyncio.run(_frames_ms(Path(directory) / "empty", shape))
        with tempfile.TemporaryDirectory() as directory:
            full = asyncio.run(_frames_ms(Path(directory) / "full", shape, answers=ANSWERS_ON_SCREEN))
        with tempfile.TemporaryDirectory() as directory:
            tools = asyncio.run(_frames_ms(Path(directory) / "tools", shape, tool_calls=TOOL_CALLS))
        figures.append(info(f"streaming {shape}: frame (draw + layout and paint) in an empty chat", empty, "ms"))
        figures.append(result(f"  with {ANSWERS_ON_SCREEN} answers on screen / empty chat", full / empty, "x",
                              RATIO_TARGET))
        figures.append(result(f"  after {TOOL_CALLS} tool calls with large previews / empty chat", tools / empty, "x",
                              RATIO_TARGET))
        print(f"   measured {shape}: empty {empty:.1f} ms, {ANSWERS_ON_SCREEN} answers {full:.1f} ms, "
              f"{TOOL_CALLS} tool calls {tools:.1f} ms", file=sys.stderr, flush=True)
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
