"""Chain benchmarks: overhead per model request (nothing triggered) and tier 2 on 1,000 messages.

The overhead is measured two ways: the chain's hook timed alone, and a real agent run with the
chain's capabilities against the same run of a bare agent in the same process (the difference of
the two medians, runs interleaved so drift affects both alike).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import BenchResult, info, median_ms, result
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from tui.agent.tools.file_tools import file_toolset
from tui.agent.tools.kinds import ToolKinds
from tui.agent.tools.path_policy import PathPolicy
from tui.base.config import ContextSettings
from tui.chain.estimate import TokenEstimator
from tui.chain.manager import ContextManager
from tui.chain.tool_compaction import compact_tool_calls

_ROOT = Path(tempfile.gettempdir())
FILE_WRITING_TOOLS = ToolKinds.of(tool.tool_def for tool in file_toolset(
    PathPolicy(workdir=_ROOT, data_root=_ROOT / "data")).tools.values()).file_writing
"""The file-writing tools' names, as a session derives them from its tools' marks."""


class _Recorder:
    def __init__(self) -> None:
        self.count = 0

    def append_messages(self, messages: list[ModelMessage]) -> int:
        start = self.count
        self.count += len(messages)
        return start


def _history(size: int) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    number = 0
    while len(messages) < size:
        call_id = f"c{number}"
        messages += [
            ModelRequest(parts=[UserPromptPart(f"question {number} " * 10)]),
            ModelResponse(parts=[ToolCallPart("read_file", {"path": f"src/m{number}.py"}, call_id)]),
            ModelRequest(parts=[ToolReturnPart("read_file", f"line {number}\n" * 60, call_id)]),
            ModelResponse(parts=[TextPart(f"answer {number} " * 10)]),
        ]
        number += 1
    return messages[:size]


@dataclass
class _RunContext:
    messages: list[ModelMessage]


@dataclass
class _RequestContext:
    messages: list[ModelMessage]
    model_request_parameters: ModelRequestParameters
    model_settings: None = None
    model: None = None


def _overhead(size: int, directory: Path) -> BenchResult:
    """Time of the chain's per-request hook (record, count, decide) with nothing triggered.

    Each sample appends one new request to the history first, as a real
    conversation does, so the figure shows whether the cost grows with history.
    """
    manager = ContextManager(settings=ContextSettings(), large_results_dir=directory, recorder=_Recorder(),
                             event_sink=lambda event: None, summarizer_model=None, config_window=100_000_000,
                             chat_model=None, file_writing_tools=FILE_WRITING_TOOLS)
    history = _history(size)
    manager.mark_recorded(history, list(range(len(history))))
    tools = [ToolDefinition(name=f"tool_{n}", description="does a thing", parameters_json_schema={"type": "object"})
             for n in range(10)]
    parameters = ModelRequestParameters(function_tools=tools)
    samples = []
    for number in range(300):
        history.append(ModelRequest(parts=[UserPromptPart(f"new prompt {number}")], instructions="be brief"))
        context = _RunContext(history)
        request = _RequestContext(list(history), parameters)
        start = time.perf_counter()
        _LOOP.run_until_complete(manager.before_request(context, request))  # type: ignore[arg-type]
        samples.append((time.perf_counter() - start) * 1000)
        history.append(ModelResponse(parts=[TextPart("ok")]))
    return result(f"chain overhead per request, {size:,}-message history", statistics.median(samples), "ms", 0.2)


def _in_real_runs(size: int, directory: Path, samples: int = 41) -> list[BenchResult]:
    """The chain inside real agent runs, next to a bare agent's run of the same size in the same process.

    Each agent continues its own conversation (the history grows by each run's messages, as in the
    app). Two figures: the chain's own time per request, measured around its hook inside the run
    (target ≤ 0.2 ms), and the whole run with the chain minus the bare run (medians of interleaved
    runs) — the second includes pydantic-ai's capability dispatch but also the run-to-run noise of
    a bare run that itself takes tens of milliseconds, so it is shown for scale, not judged.
    """

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("ok")])

    manager = ContextManager(settings=ContextSettings(), large_results_dir=directory, recorder=_Recorder(),
                             event_sink=lambda event: None, summarizer_model=None, config_window=100_000_000,
                             chat_model=None, file_writing_tools=FILE_WRITING_TOOLS)
    hook_ms: list[float] = []
    timed_hook = manager.before_request
    timed_after = manager.after_response

    async def before_request(ctx, request_context):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return await timed_hook(ctx, request_context)
        finally:
            hook_ms.append((time.perf_counter() - start) * 1000)

    async def after_response(request_context, response):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return await timed_after(request_context, response)
        finally:
            hook_ms[-1] += (time.perf_counter() - start) * 1000  # both hooks of one request, together

    manager.before_request = before_request  # type: ignore[method-assign]
    manager.after_response = after_response  # type: ignore[method-assign]
    histories = {"bare": _history(size), "chain": _history(size)}
    manager.mark_recorded(histories["chain"], list(range(size)))
    agents = {"bare": Agent(FunctionModel(reply), instructions="be brief"),
              "chain": Agent(FunctionModel(reply), instructions="be brief", capabilities=manager.capabilities())}
    run_ms: dict[str, list[float]] = {"bare": [], "chain": []}
    for number in range(samples + 2):
        for name in ("bare", "chain") if number % 2 else ("chain", "bare"):
            start = time.perf_counter()
            run = _LOOP.run_until_complete(agents[name].run(f"prompt {number}", message_history=histories[name]))
            run_ms[name].append((time.perf_counter() - start) * 1000)
            histories[name] = run.all_messages()
    warm = slice(2, None)  # the first runs warm caches (the chain's first count is a full one)
    bare = statistics.median(run_ms["bare"][warm])
    added = statistics.median(run_ms["chain"][warm]) - bare
    return [
        result(f"chain time per request inside a real agent run, {size:,}-message history",
               statistics.median(hook_ms[warm]), "ms", 0.2),
        info(f"  run with chain − bare run, {size:,} messages (bare run {bare:.1f} ms; noise-dominated)",
             added, "ms"),
    ]


_LOOP = asyncio.new_event_loop()


def main() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        figures = [_overhead(1_000, root), _overhead(10_000, root),
                   *_in_real_runs(1_000, root), *_in_real_runs(10_000, root, samples=15)]
        history = _history(1_000)
        estimator = TokenEstimator()
        estimator.total(history)
        runs = iter(range(100))

        def tier2() -> None:  # a fresh directory each time: every copy is really written
            compact_tool_calls(history, estimator=estimator, large_results_dir=root / f"t2-{next(runs)}",
                               protect_recent_tokens=4_000, file_writing_tools=FILE_WRITING_TOOLS).save()

        figures.append(result("tier 2 on a 1,000-message history (250 outputs saved)", median_ms(tier2, runs=9),
                              "ms", 20.0))
    return figures


if __name__ == "__main__":
    from common import report

    report(main())
