"""Shell-command benchmarks: a 10 MB command output streamed into its tool block, and a 2 MB output's eviction.

1. In the real app (headless, 120x40), launched as ``deep-tui`` launches it (the collector off while it starts,
   start-up's heap frozen once the session is open), a FunctionModel calls ``execute`` (``[tools] commands =
   "always"``, the bubblewrap sandbox) with a command printing 10 MB of log lines at full speed. Timed from Enter
   until what the user waits for is painted: the command's last line of output and its exit status in the tool
   block (the whole output read and shown; the chain saving it to disk goes on meanwhile, in the whole-turn
   figure). The same command writing to a file instead (``… > out.log``) is the reference, timed from Enter
   until its exit status is painted: the figure is the ratio of the medians over :data:`RUNS` alternating pairs
   (target ≤ 1.25), with the lowest and highest pair's ratio. Between turns the search index's writer thread
   catches up, as it does while a person types the next prompt. Shown for context: the whole turns' ratio (until
   the model's answer after the tool is drawn: eviction, recording and the answer included), and the command
   alone, outside deep-tui.
2. The chain's tier 1 (``EvictionCapability.after_tool_execute``) on a 2 MB command output: estimate, save byte
   for byte, build the head-and-tail preview. Target ≤ 50 ms added.

``python bench/bench_shell.py`` runs it alone; ``make bench`` runs it with the rest. Skipped (one line) where
no sandbox can run.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pydantic_ai  # noqa: E402
from common import BenchResult, info, result  # noqa: E402
from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel  # noqa: E402
from textual import events  # noqa: E402

from tui.agent.models.choice import choose_model  # noqa: E402
from tui.agent.session.factory import RuntimeFactory, SessionRequest  # noqa: E402
from tui.agent.shell.sandbox import find_bwrap, probe  # noqa: E402
from tui.app.app import DeepTuiApp  # noqa: E402
from tui.app.opening import OpeningSession  # noqa: E402
from tui.app.widgets.chat_blocks import ToolBlock  # noqa: E402
from tui.app.widgets.chat_view import ChatView  # noqa: E402
from tui.base.config import Settings, ToolSettings  # noqa: E402
from tui.base.paths import DataDir  # noqa: E402

pydantic_ai.BANNER_ENABLED = False
RUNS = 9
RATIO_TARGET = 1.25
EVICTION_TARGET_MS = 50.0
LINES = 160_000
COMMAND = (f"awk 'BEGIN {{ for (i = 1; i <= {LINES}; i++) "
           "printf \"build step %d: compiling module_%d.c with -O2 -Wall, ok\\n\", i, i }'")
"""About 10 MB of log lines (64 bytes each), printed as fast as seq can."""


def _model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "done"
            return
        command = next(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))
        yield {0: DeltaToolCall("execute", json.dumps({"command": command}), tool_call_id=f"c{len(messages)}")}

    return FunctionModel(stream_function=stream, model_name="bench-shell")


@dataclass(frozen=True)
class TurnTimes:
    on_screen: float
    """Seconds from Enter until a frame shows the command's end in its tool block: its exit status and, when it
    printed to the screen, its last line of output."""
    turn: float
    """Seconds from Enter until the turn is over (the model's answer after the tool) and drawn."""


async def _painted(app: DeepTuiApp) -> None:
    """Returns once the screen has been refreshed (what the widgets hold is painted)."""
    refreshed = asyncio.Event()
    app.screen.call_after_refresh(refreshed.set)
    await refreshed.wait()


def _newest_tool_block(chat: ChatView) -> ToolBlock | None:
    """The chat's last tool block, looked for among its last few children (a DOM query every few milliseconds
    would take the app's thread from the turn it times)."""
    for child in reversed(chat.children[-4:]):
        if isinstance(child, ToolBlock):
            return child
    return None


def _command_ended_on_screen(block: ToolBlock, tail: str | None) -> bool:
    result = block.query(".tool-result")
    if not result or "exit status" not in str(result.first().render()):
        return False
    return tail is None or (block.output_view is not None and tail in block.output_view.shown_text)


async def _turn_times(root: Path, commands: list[str]) -> list[TurnTimes]:
    """Each command as a prompt (the model runs it) in the real app, timed from Enter."""
    try:
        return await _timed_turns(root, commands)
    finally:
        gc.enable()
        gc.unfreeze()  # the next benchmark (make bench runs them in one process) starts as it would alone


async def _timed_turns(root: Path, commands: list[str]) -> list[TurnTimes]:
    work = root / "work"
    work.mkdir(exist_ok=True)
    data = DataDir(root / "data")
    settings = Settings(tools=ToolSettings(commands="always"))
    factory = RuntimeFactory(settings=settings, data_dir=data, workdir=work, choice=choose_model("offline", None),
                             chat_model=_model())
    # Launched as `deep-tui` launches it: the collector off while it starts (tui.cli), the session opened in
    # the background, then start-up's heap frozen and the collector on again (FirstSessionOpening._adopt_first, tui/app/session_opening.py).
    gc.disable()
    app = DeepTuiApp.opening(settings=settings, memory_path=data.memory_file(settings.agent_name),
                             data_root=data.root, opener=lambda: (factory, factory.open_request_sync(SessionRequest())))
    samples: list[TurnTimes] = []
    async with app.run_test(size=(120, 40)) as pilot:
        opening = time.perf_counter()
        while isinstance(app.runtime, OpeningSession) or not gc.isenabled():
            await pilot.pause(0.01)
            if time.perf_counter() - opening > 60:
                raise RuntimeError(f"the session did not open in 60 s: {app.startup_error}")
        runtime = app.runtime
        chat = app.query_one(ChatView)
        for command in commands:
            tail = f"step {LINES}: compiling" if command == COMMAND else None  # the streamed run's last line
            before = _newest_tool_block(chat)
            app.query_one("PromptInput").text = command  # type: ignore[attr-defined]
            started = time.perf_counter()
            app.post_message(events.Key("enter", "\r"))  # not pilot.press: it waits for the app to go idle
            on_screen: float | None = None
            while True:
                await asyncio.sleep(0.005)
                block = _newest_tool_block(chat)
                if on_screen is None and block not in (None, before) and _command_ended_on_screen(block, tail):
                    await _painted(app)
                    on_screen = time.perf_counter() - started
                if on_screen is not None and not app.runtime.busy:
                    await _painted(app)
                    break
                if time.perf_counter() - started > 60:
                    raise RuntimeError(f"the command did not finish in 60 s: {command}")
            samples.append(TurnTimes(on_screen, time.perf_counter() - started))
            # the next prompt comes seconds later for a person: the index writer has caught up by then (a
            # streamed turn's saved output would otherwise be indexed during the file turn that follows it)
            await asyncio.to_thread(factory.search.wait_for_records)
            await pilot.pause()
    await runtime.aclose()
    return samples


def _bare_seconds(root: Path) -> float:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(f"{COMMAND} > {root / 'bare.log'}", shell=True, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _eviction_ms(root: Path) -> float:
    from tui.chain.eviction import EvictionCapability

    line = "test_module.py::test_case PASSED [ 42%] some output of the test run\n"
    text = line * (2_000_000 // len(line)) + "[exit status 0 · 1.2 s]"
    capability = EvictionCapability(large_results_dir=root / "large", large_result_tokens=20_000, emit=lambda e: None)
    call = ToolCallPart("execute", {"command": "pytest -v"}, tool_call_id="bench")
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        asyncio.run(capability.after_tool_execute(None, call=call, tool_def=None, args={}, result=text))  # type: ignore[arg-type]
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> list[BenchResult]:
    bwrap = find_bwrap()
    failure = "no bwrap found" if bwrap is None else probe(str(bwrap), False)
    figures: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        figures.append(result("2 MB command output: eviction (save + preview) added", _eviction_ms(root), "ms",
                              EVICTION_TARGET_MS))
        if failure:
            print(f"skipping the streamed-output figure: no sandbox ({failure})", file=sys.stderr)
            return figures
        bare = _bare_seconds(root)
        # alternate the two, so neither gets the warmer cache; the first pair warms up (imports, first frames)
        times = asyncio.run(_turn_times(root, [COMMAND + " > out.log", COMMAND] * (RUNS + 1)))[2:]
        size = (root / "work" / "out.log").stat().st_size
    to_file, streamed = times[0::2], times[1::2]
    ratios = sorted(s.on_screen / f.on_screen for f, s in zip(to_file, streamed, strict=True))
    turn_ratios = sorted(s.turn / f.turn for f, s in zip(to_file, streamed, strict=True))
    median_file = statistics.median(t.on_screen for t in to_file)
    median_streamed = statistics.median(t.on_screen for t in streamed)
    figures.append(result(f"{size / 1e6:.1f} MB command output on screen ÷ same command to a file (its end drawn)",
                          median_streamed / median_file, "×", RATIO_TARGET))
    figures.append(info(f"  spread of the {RUNS} pairs' ratios: lowest", ratios[0], "×"))
    figures.append(info(f"  spread of the {RUNS} pairs' ratios: highest", ratios[-1], "×"))
    figures.append(info("  Enter → last line and exit status drawn in the tool block", median_streamed * 1000, "ms"))
    figures.append(info("  Enter → exit status drawn, the command writing to a file", median_file * 1000, "ms"))
    figures.append(info("  whole turn (the model's answer after the tool) streamed ÷ to a file",
                        statistics.median(turn_ratios), "×"))
    figures.append(info("  the command alone, outside deep-tui, to a file", bare * 1000, "ms"))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
