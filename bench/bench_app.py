"""App benchmarks (headless Textual): open long sessions, the picker with 1,000 sessions,
key latency while streaming at 2,000 tokens/s, and memory with a 10,000-message session open."""

from __future__ import annotations

import asyncio
import resource
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pydantic_ai
from common import BenchResult, info, result
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from textual import events

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.prompt_input import PromptInput
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.store.messages_file import encode_message

pydantic_ai.BANNER_ENABLED = False
STREAM_TOKENS = 10_000
TOKENS_PER_SECOND = 2_000


def _factory(root: Path, chat_model: FunctionModel | None = None) -> RuntimeFactory:
    work = root / "work"
    work.mkdir(exist_ok=True)
    return RuntimeFactory(settings=Settings(), data_dir=DataDir(root / "data"), workdir=work,
                          choice=choose_model("offline", None), chat_model=chat_model)


def _session(factory: RuntimeFactory, count: int) -> str:
    handle = factory.store.create(model="offline")
    lines = []
    for number in range(count // 2):
        lines.append(encode_message(ModelRequest(parts=[UserPromptPart(f"question {number} " * 8)])))
        lines.append(encode_message(ModelResponse(parts=[TextPart(f"answer **{number}** " * 12)])))
    handle.messages.path.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    handle.close()
    return handle.id


def _app(factory: RuntimeFactory, session_id: str | None) -> DeepTuiApp:
    runtime = factory.open_request_sync(SessionRequest(resume=session_id))
    return DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)


async def _open_ms(factory: RuntimeFactory, session_ids: list[str], last_text: str) -> list[float]:
    """In a running app, open each session (as the picker does) until its last message is on screen."""
    app = _app(factory, None)
    samples: list[float] = []
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        await pilot.pause()
        for session_id in session_ids:
            start = time.perf_counter()
            runtime = await factory.open_session(session_id)
            previous = app.runtime
            await app.main_screen.adopt_runtime(runtime)
            await pilot.pause()
            samples.append((time.perf_counter() - start) * 1000)
            assert last_text in app.query(AssistantBlock).last().source
            await previous.aclose()
    await app.runtime.aclose()
    return samples


async def _picker_ms(factory: RuntimeFactory, times: int = 7) -> tuple[list[float], list[float]]:
    """Open the picker ``times`` times in one running app: (open-and-listed, refilter) samples in ms."""
    app = _app(factory, None)
    opened: list[float] = []
    filtered: list[float] = []
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        await pilot.pause()
        while app.recent_sessions is None:  # the listing the app keeps ahead, as it would be seconds after start
            await asyncio.sleep(0.01)
        for _ in range(times):
            start = time.perf_counter()
            app.action_sessions()  # what ctrl+s does, without the test pilot's wait-for-idle
            screen = app.screen
            while not (isinstance(screen, SessionPickerScreen) and screen.query("#sessions")
                       and screen.session_list.option_count >= 1_000):
                if time.perf_counter() - start > 10:
                    raise RuntimeError("the picker did not list 1,000 sessions within 10 s")
                await asyncio.sleep(0.002)
                screen = app.screen
            opened.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            screen.filter_input.value = "session 99"  # as typing does; each keystroke refilters the same way
            while screen.session_list.option_count > 200 and time.perf_counter() - start < 10:
                await asyncio.sleep(0.002)
            filtered.append((time.perf_counter() - start) * 1000)
            await pilot.press("escape")
            await pilot.pause(0.05)
    await app.runtime.aclose()
    return opened, filtered


def _streaming_model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        batch = 20
        for _ in range(STREAM_TOKENS // batch):
            await asyncio.sleep(batch / TOKENS_PER_SECOND)
            yield "word " * (batch // 2) + "\n" * (batch // 2 // 10)

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("x")]), stream_function=stream,
                         model_name="stream")


async def _key_latency_ms(root: Path) -> float:
    factory = _factory(root, _streaming_model())
    app = _app(factory, None)
    samples: list[float] = []
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        await pilot.press(*"stream please", "enter")
        await pilot.pause(0.3)
        prompt = app.query_one(PromptInput)
        while app.runtime.busy and len(samples) < 40:
            before = prompt.text
            start = time.perf_counter()
            prompt.post_message(events.Key("k", "k"))  # as the terminal driver delivers a key
            while prompt.text == before and time.perf_counter() - start < 2:
                await asyncio.sleep(0.0005)
            samples.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(0.05)
        await pilot.press("escape")
    await app.runtime.aclose()
    return statistics.median(samples) if samples else float("nan")


def _exchange(number: int) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
            ModelResponse(parts=[TextPart(f"answer {number}")])]


def main() -> list[BenchResult]:
    """Each section in its own temporary directory; the picker and key latency run before the long
    sessions are opened, so their figures are not skewed by that heap (RSS is a peak anyway)."""
    figures: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as directory:
        factory = _factory(Path(directory))
        for number in range(1_000):
            handle = factory.store.create(model="offline")
            handle.append_messages(_exchange(number))  # a real session: a prompt and its answer
            handle.rename(f"session {number}")
            handle.close()
        opened, filtered = asyncio.run(_picker_ms(factory))
        figures.append(result("picker with 1,000 sessions: open and listed", statistics.median(opened), "ms", 150.0))
        figures.append(info("  picker: the first opening in a run (builds the dialog, kept after)", opened[0], "ms"))
        figures.append(result("picker with 1,000 sessions: refilter on a keystroke", statistics.median(filtered),
                              "ms", 150.0))
    with tempfile.TemporaryDirectory() as directory:
        figures.append(result(f"key press answered while streaming at {TOKENS_PER_SECOND:,} tokens/s",
                              asyncio.run(_key_latency_ms(Path(directory))), "ms", 50.0))
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        factory = _factory(root)
        for count, target in ((1_000, 300.0), (10_000, 500.0)):
            session_ids = [_session(factory, count) for _ in range(5)]
            samples = asyncio.run(_open_ms(factory, session_ids, f"answer **{count // 2 - 1}**"))
            figures.append(result(f"open a {count:,}-message session to its last message", statistics.median(samples),
                                  "ms", target))
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        figures.append(result("peak RSS after opening the 10,000-message session", rss_mb, "MB", 300.0))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())

