"""Streaming benchmark: long answers from a loopback OpenAI chat server, through the real app.

For each shape (one paragraph, prose, one long code fence, a long bullet list) 20,000 tokens are
served at 4,000 tok/s one token per chunk, and at 2,000 tok/s in 4-token chunks. In one child
process per run, a bare pydantic-ai ``Agent.run_stream`` consumes the stream first, then the app
(``DeepTuiApp`` with ``openai-chat:`` and the server's base URL, headless at 120x40) streams it;
the figure is (time until the last token is on screen) / (bare consumption time). Keys are sent to
the prompt every 100 ms while the answer streams; their answer time and the child's peak RSS are
reported too. The server runs in this (parent) process, so it does not share the child's GIL.

Next to it, in the same child: the session runtime alone (``SessionRuntime.run_turn`` consumed
with nothing drawn: recording, accounting, the chain's hooks, translation) against the same bare
agent, and the CPU each of the three spent per streamed chunk, so a gap can be told apart as the
runtime's or the view's.

``python bench/bench_stream.py [repeats]`` runs it alone; ``make bench`` runs it with the rest.
``DEEP_TUI_BENCH_STREAM_SHAPES=prose,code`` and ``DEEP_TUI_BENCH_STREAM_RATES=4000`` run a subset.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BenchResult, info, result  # noqa: E402

TOKENS = 20_000
MARKER = "omega7end"
RATIO_TARGET = 1.25
KEY_TARGET_MS = 50.0
SHAPES = ("paragraph", "prose", "code", "list")
RATES = ((4_000, 1), (2_000, 4))
"""(tokens per second, tokens per chunk)."""


def tokens_for(shape: str, count: int = TOKENS) -> list[str]:
    """``count`` tokens of one shape; the last one is :data:`MARKER`."""
    body: list[str] = []
    if shape == "paragraph":
        body = [f" word{n % 97}" for n in range(count - 1)]
    elif shape == "prose":
        for n in range(count - 1):
            body.append(f" word{n % 97}" + ("\n\n" if n % 80 == 79 else ""))
    elif shape == "code":
        body = ["```python\n"]
        while len(body) < count - 2:
            line = len(body)
            body.extend([f"value{line}", " =", " compute", "(", f"{line}", ",", " x", ")\n"])
        body = [*body[:count - 2], f"{MARKER}\n"]
        return [*body, "```\n"]
    elif shape == "list":
        body = []
        while len(body) < count - 1:
            item = len(body)
            body.extend(["- item", f" {item}", " with", " a", " few", " more", " words", "\n"])
        body = body[: count - 1]
    else:
        raise ValueError(shape)
    return [*body, f" {MARKER}"]


def chunked(tokens: list[str], size: int) -> list[str]:
    return ["".join(tokens[start:start + size]) for start in range(0, len(tokens), size)]


# -- the child: one bare run, then one app run ---------------------------------------------------------


async def _bare_run(base_url: str) -> tuple[float, float]:
    """(seconds, CPU seconds) a bare pydantic-ai agent needs to consume the stream."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel("x", provider=OpenAIProvider(base_url=base_url, api_key="loopback")))
    start, cpu = time.perf_counter(), time.process_time()
    async with agent.run_stream("go") as run:
        async for _ in run.stream_text(delta=True, debounce_by=None):
            pass
    return time.perf_counter() - start, time.process_time() - cpu


def _factory(base_url: str, root: Path) -> Any:
    from tui.agent.models.choice import choose_model
    from tui.agent.session.factory import RuntimeFactory
    from tui.base.config import Settings
    from tui.base.paths import DataDir

    (root / "work").mkdir(parents=True)
    return RuntimeFactory(settings=Settings(base_url=base_url), data_dir=DataDir(root / "data"),
                          workdir=root / "work", choice=choose_model("openai-chat:x", None))


async def _runtime_run(base_url: str, root: Path) -> tuple[float, float]:
    """(seconds, CPU seconds) the session runtime alone needs: ``run_turn`` consumed, nothing drawn."""
    from tui.agent.session.factory import SessionRequest
    from tui.agent.turn_events import TextDelta, TurnFinished

    runtime = _factory(base_url, root).open_request_sync(SessionRequest())
    shown: list[str] = []
    finished = False
    start, cpu = time.perf_counter(), time.process_time()
    async for event in runtime.run_turn("go"):
        if isinstance(event, TextDelta):
            shown.append(event.text)
        finished = finished or isinstance(event, TurnFinished)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    await runtime.aclose()
    if not finished or MARKER not in "".join(shown[-2:]):
        raise RuntimeError("the runtime's turn did not finish with the last token")
    return seconds, cpu


async def _app_run(base_url: str, root: Path) -> dict[str, float]:
    from textual import events

    from tui.agent.session.factory import SessionRequest
    from tui.app.app import DeepTuiApp
    from tui.app.widgets.prompt_input import PromptInput

    factory = _factory(base_url, root)
    # As `deep-tui` starts: the collector off (tui.cli), the screen first, the session opened in a thread.
    gc.disable()
    app = DeepTuiApp.opening(settings=factory.settings, memory_path=factory.data_dir.memory_file(
        factory.settings.agent_name), data_root=factory.data_dir.root,
        opener=lambda: (factory, factory.open_request_sync(SessionRequest())))
    keys: list[float] = []
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        while app.factory is None:
            await pilot.pause(0.01)
        await pilot.pause(0.3)
        prompt = app.query_one(PromptInput)

        def turn_running() -> bool:
            return any(worker.group == "turn" and worker.is_running for worker in app.workers)

        start, cpu = time.perf_counter(), time.process_time()
        app.main_screen.run_turn("go")
        while not turn_running():
            await asyncio.sleep(0.001)
        next_key = start + 0.1
        while turn_running():
            now = time.perf_counter()
            if now >= next_key and app.runtime.busy:
                before = prompt.text
                sent = time.perf_counter()
                prompt.post_message(events.Key("k", "k"))  # as the terminal driver delivers a key
                while prompt.text == before and time.perf_counter() - sent < 5:
                    await asyncio.sleep(0.0005)
                keys.append((time.perf_counter() - sent) * 1000)
                next_key = time.perf_counter() + 0.1
            await asyncio.sleep(0.002)
        shown, cpu = time.perf_counter() - start, time.process_time() - cpu
        await pilot.pause()
        screen = app.export_screenshot()
        if MARKER not in screen:
            raise RuntimeError("the last token is not on screen after the turn ended")
    await app.runtime.aclose()
    keys.sort()
    return {"app_seconds": shown, "app_cpu": cpu,
            "key_median_ms": statistics.median(keys) if keys else float("nan"),
            "key_p95_ms": keys[min(len(keys) - 1, int(len(keys) * 0.95))] if keys else float("nan"),
            "keys": len(keys)}


def child(base_url: str) -> None:
    import pydantic_ai

    pydantic_ai.BANNER_ENABLED = False
    bare, bare_cpu = asyncio.run(_bare_run(base_url))
    with tempfile.TemporaryDirectory() as directory:
        runtime, runtime_cpu = asyncio.run(_runtime_run(base_url, Path(directory) / "runtime"))
        figures = asyncio.run(_app_run(base_url, Path(directory) / "app"))
    figures.update(bare_seconds=bare, bare_cpu=bare_cpu, runtime_seconds=runtime, runtime_cpu=runtime_cpu)
    figures["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


# -- the parent: the server, the runs, the figures -------------------------------------------------------


@dataclass
class Run:
    ratio: float
    app_seconds: float
    bare_seconds: float
    key_median_ms: float
    key_p95_ms: float
    rss_mb: float
    runtime_ratio: float
    """The runtime alone (nothing drawn) / the bare agent."""
    bare_cpu_us: float
    """CPU per streamed chunk, in microseconds: the bare agent, the runtime alone, the app."""
    runtime_cpu_us: float
    app_cpu_us: float


def one_run(shape: str, rate: int, per_chunk: int) -> Run:
    from tests.support.openai_server import ChatServerState, openai_chat_server

    chunks = chunked(tokens_for(shape), per_chunk)
    state = ChatServerState(content_chunks=chunks, chunks_per_second=rate / per_chunk)
    with openai_chat_server(state) as (base_url, _):
        env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPATH": str(ROOT)}
        env.pop("OPENAI_API_KEY", None)
        completed = subprocess.run([sys.executable, __file__, "--child", base_url], capture_output=True,
                                   text=True, env=env, timeout=600, cwd=ROOT)
    if completed.returncode != 0:
        raise RuntimeError(f"{shape} at {rate} tok/s failed:\n{completed.stderr[-3000:]}")
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    per_chunk_us = 1e6 / len(chunks)
    return Run(figures["app_seconds"] / figures["bare_seconds"], figures["app_seconds"], figures["bare_seconds"],
               figures["key_median_ms"], figures["key_p95_ms"], figures["rss_mb"],
               figures["runtime_seconds"] / figures["bare_seconds"], figures["bare_cpu"] * per_chunk_us,
               figures["runtime_cpu"] * per_chunk_us, figures["app_cpu"] * per_chunk_us)


def _chosen(variable: str, every: tuple[str, ...]) -> tuple[str, ...]:
    """The comma-separated subset ``variable`` names (to rerun one case), else ``every``."""
    names = tuple(name.strip() for name in os.environ.get(variable, "").split(",") if name.strip())
    unknown = set(names) - set(every)
    if unknown:
        raise SystemExit(f"{variable}: unknown {', '.join(sorted(unknown))} (choose from {', '.join(every)})")
    return names or every


def main(repeats: int | None = None) -> list[BenchResult]:
    repeats = repeats or int(os.environ.get("DEEP_TUI_BENCH_REPEATS", "3"))
    shapes = _chosen("DEEP_TUI_BENCH_STREAM_SHAPES", SHAPES)
    rates = [(rate, per_chunk) for rate, per_chunk in RATES
             if str(rate) in _chosen("DEEP_TUI_BENCH_STREAM_RATES", tuple(str(r) for r, _ in RATES))]
    figures: list[BenchResult] = []
    for rate, per_chunk in rates:
        for shape in shapes:
            runs = [one_run(shape, rate, per_chunk) for _ in range(repeats)]
            label = f"{shape}, {TOKENS:,} tokens at {rate:,} tok/s, {per_chunk} per chunk"
            figures.append(result(f"stream {label}: on screen / bare agent", statistics.median(r.ratio for r in runs),
                                  "x", RATIO_TARGET))
            figures.append(info(f"  on screen after (bare agent: {statistics.median(r.bare_seconds for r in runs):.2f} s)",
                                statistics.median(r.app_seconds for r in runs), "s"))
            figures.append(result("  key press answered while it streams (median)",
                                  statistics.median(r.key_median_ms for r in runs), "ms", KEY_TARGET_MS))
            figures.append(result("  key press answered while it streams (p95)",
                                  statistics.median(r.key_p95_ms for r in runs), "ms", KEY_TARGET_MS))
            figures.append(info("  peak RSS of the app process", max(r.rss_mb for r in runs), "MB"))
            figures.append(info("  the runtime alone, nothing drawn / bare agent",
                                statistics.median(r.runtime_ratio for r in runs), "x"))
            cpu = {name: statistics.median(getattr(r, f"{name}_cpu_us") for r in runs)
                   for name in ("bare", "runtime", "app")}
            figures.append(info(f"  CPU per chunk: bare agent {cpu['bare']:.0f} us, runtime alone "
                                f"{cpu['runtime']:.0f} us, app", cpu["app"], "us"))
            print(f"   measured: {label}: ratio {statistics.median(r.ratio for r in runs):.2f}, "
                  f"runtime alone {statistics.median(r.runtime_ratio for r in runs):.2f}, "
                  f"CPU/chunk bare {cpu['bare']:.0f} runtime {cpu['runtime']:.0f} app {cpu['app']:.0f} us, "
                  f"app {statistics.median(r.app_seconds for r in runs):.1f} s, "
                  f"bare {statistics.median(r.bare_seconds for r in runs):.1f} s, "
                  f"keys {statistics.median(r.key_median_ms for r in runs):.0f}/"
                  f"{statistics.median(r.key_p95_ms for r in runs):.0f} ms, RSS {max(r.rss_mb for r in runs):.0f} MB",
                  file=sys.stderr, flush=True)
    return figures


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        from common import report

        report(main(int(sys.argv[1]) if len(sys.argv) > 1 else None))
