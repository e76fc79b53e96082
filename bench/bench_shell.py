"""Shell-command benchmarks: a 10 MB command output streamed into its tool block, and a 2 MB output's eviction.

1. In the real app (headless, 120x40), a FunctionModel calls ``execute`` (``[tools] commands = "always"``, the
   bubblewrap sandbox) with a command printing 10 MB of log lines at full speed. Timed from Enter until the
   turn is over and drawn — the whole output read, its tail in the tool block, the result (exit status) shown,
   the 10 MB evicted by the chain. The same turn with the command writing to a file instead (``… > out.log``)
   is the reference: the figure is their ratio (target ≤ 1.25). The command alone (outside deep-tui, to a
   file) is shown for context.
2. The chain's tier 1 (``EvictionCapability.after_tool_execute``) on a 2 MB command output: estimate, save byte
   for byte, build the head-and-tail preview. Target ≤ 50 ms added.

``python bench/bench_shell.py`` runs it alone; ``make bench`` runs it with the rest. Skipped (one line) where
no sandbox can run.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pydantic_ai  # noqa: E402
from common import BenchResult, info, result  # noqa: E402
from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel  # noqa: E402

from tui.agent.models import choose_model  # noqa: E402
from tui.agent.runtime import RuntimeFactory, SessionRequest  # noqa: E402
from tui.agent.sandbox import find_bwrap, probe  # noqa: E402
from tui.app.shell import DeepTuiApp  # noqa: E402
from tui.app.widgets.blocks import ToolBlock  # noqa: E402
from tui.base.config import Settings, ToolSettings  # noqa: E402
from tui.base.paths import DataDir  # noqa: E402

pydantic_ai.BANNER_ENABLED = False
RUNS = 3
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


async def _turn_seconds(root: Path, commands: list[str]) -> list[float]:
    """Each command as a prompt (the model runs it): seconds from Enter until the turn is over and drawn."""
    work = root / "work"
    work.mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=Settings(tools=ToolSettings(commands="always")), data_dir=DataDir(root / "data"),
                             workdir=work, choice=choose_model("offline", None), chat_model=_model())
    runtime = factory.open_request_sync(SessionRequest())
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    samples: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        for command in commands:
            blocks = len(app.query(ToolBlock))
            app.query_one("PromptInput").text = command  # type: ignore[attr-defined]
            started = time.perf_counter()
            await pilot.press("enter")
            while True:
                await pilot.pause(0.005)
                found = app.query(ToolBlock)
                if len(found) > blocks and not app.runtime.busy and "exit status" in str(
                        found.last().query(".tool-result").first().render()):
                    break
                if time.perf_counter() - started > 60:
                    raise RuntimeError(f"the command did not finish in 60 s: {command}")
            await pilot.pause(0)
            samples.append(time.perf_counter() - started)
            block = app.query(ToolBlock).last()
            if command == COMMAND:  # the streamed run: its tail must be in the block
                assert block.output_view is not None and f"step {LINES}: compiling" in block.output_view.shown_text
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
        # alternate the two, so neither gets the warmer cache
        samples = asyncio.run(_turn_seconds(root, [COMMAND + " > out.log", COMMAND] * RUNS))
        to_file, streamed = statistics.median(samples[0::2]), statistics.median(samples[1::2])
        size = (root / "work" / "out.log").stat().st_size
    figures.append(result(f"{size / 1e6:.1f} MB command output on screen ÷ same command to a file (app turns)",
                          streamed / to_file, "×", RATIO_TARGET))
    figures.append(info("  turn with the output streamed into the tool block", streamed * 1000, "ms"))
    figures.append(info("  turn with the command writing to a file", to_file * 1000, "ms"))
    figures.append(info("  the command alone, outside deep-tui, to a file", bare * 1000, "ms"))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
