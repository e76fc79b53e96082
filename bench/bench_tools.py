"""Tool bounds (issue 20.4): hostile patterns, big files and a huge directory cost bounded time and memory.

Each figure runs the real tool through a real agent run (FunctionModel makes the one call). Targets are the
promises in docs/reliability.md ("Every tool is bounded"); memory is the tracemalloc peak of the whole run.
``DEEP_TUI_BENCH_ENTRIES`` sets the crowded directory's size (default 300,000: past every bound — a walk
reads at most 100,000 entries, ls 105,000 — so a directory of 1,000,000 costs the same, only longer to
create; tmpfs is used when there is one, as creating the entries is most of this benchmark's time).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

from common import BenchResult, info, result
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir

MB = 1024 * 1024


def _call(work: Path, tool: str, args: dict[str, object]) -> tuple[str, float, float]:
    """(the tool's answer, seconds, peak MB) of one call through a real agent run."""
    data = DataDir(work.parent / "bench-data")
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()))

    def model(messages: list[ModelMessage], agent_info: AgentInfo) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(part.model_response_str())])
        return ModelResponse(parts=[ToolCallPart(tool, args, "bench-call")])

    agent = Agent(FunctionModel(model), toolsets=parts.toolsets, capabilities=parts.capabilities)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        output = agent.run_sync("go").output
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / MB
    finally:
        tracemalloc.stop()
    return output, elapsed, peak


def _scratch() -> Path:
    shm = Path("/dev/shm")
    parent = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="deep-tui-bench-tools-", dir=parent))


def main() -> list[BenchResult]:
    results: list[BenchResult] = []
    root = _scratch()
    try:
        work = root / "work"
        work.mkdir()
        (work / "long.txt").write_text("a" * 200_000 + "b\n")
        _, seconds, _ = _call(work, "grep", {"pattern": "(a+)+$", "path": "long.txt"})
        results.append(result("grep (a+)+$ on a 200,000-char line", seconds * 1000, "ms", 1_000))
        (work / ("a" * 200 + "b")).write_text("x")
        _, seconds, _ = _call(work, "glob", {"pattern": "*a*a*a*a*a*a*a*a*a*a*c"})
        results.append(result("glob *a*a*a*a*a*a*a*a*a*a*c", seconds * 1000, "ms", 1_000))

        with (work / "big.log").open("w") as out:
            for n in range(3_300_000):
                out.write(f"l{n:07d}\n")
        _, seconds, peak = _call(work, "read_file", {"path": "big.log", "limit": 5})
        results.append(result("read_file(limit=5) on 33 MB: peak memory", peak, "MB", 16))
        results.append(info("read_file(limit=5) on 33 MB: time", seconds * 1000, "ms"))
        size = (work / "big.log").stat().st_size
        _, seconds, _ = _call(work, "grep", {"pattern": r"l\d{6}9x", "path": "big.log"})
        results.append(info("grep throughput (no match, 33 MB)", size / MB / seconds, "MB/s"))
        (work / "wide.js").write_bytes(b"x" * 64 * MB + b"\n")
        _, seconds, peak = _call(work, "read_file", {"path": "wide.js"})
        results.append(result("read_file of one 64 MB line: peak memory", peak, "MB", 16))

        entries = int(os.environ.get("DEEP_TUI_BENCH_ENTRIES", "300000"))
        crowd = work / "crowd"
        crowd.mkdir()
        for n in range(entries):
            os.close(os.open(crowd / f"f{n:07d}", os.O_CREAT | os.O_WRONLY, 0o644))
        for tool, args in (("ls", {"path": "crowd"}), ("glob", {"pattern": "**/*.md"}),
                           ("grep", {"pattern": "needle", "glob": "*.md"})):
            _, seconds, peak = _call(work, tool, args)
            results.append(result(f"{tool} over {entries:,} entries: time", seconds * 1000, "ms", 5_000))
            results.append(result(f"{tool} over {entries:,} entries: peak memory", peak, "MB", 64))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


if __name__ == "__main__":
    from common import report

    report(main())
