"""Subagents (issue 32.1): delegating a 5 MB log grows the parent's context by the subagent's answer and the call,
no more; two subagents of one response run at once (wall time ≤ 1.3 × one).

Both through the real session runtime against the loopback OpenAI server (tests/support/openai_server.py): the
parent's model calls ``task``; the subagent's reads ``big.log`` (5 MB) page by page, then answers. For the
concurrency figure every subagent request takes :data:`LATENCY` seconds at the server (a model's thinking time),
so the figure is what running them at once saves, not the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BenchResult, info, result  # noqa: E402
from pydantic_ai import models  # noqa: E402

from tests.support.openai_server import ChatServerState, Reply, openai_chat_server  # noqa: E402
from tui.agent.models.choice import choose_model  # noqa: E402
from tui.agent.session.factory import RuntimeFactory, SessionRequest  # noqa: E402
from tui.base.config import ProviderSettings, Settings  # noqa: E402
from tui.base.paths import DataDir  # noqa: E402

SUBAGENT_MARK = "You are a subagent of deep-tui's assistant"
ANSWER = "big.log holds 3 ERROR lines (disk full): near its start, a third of the way in, and at its end."
LATENCY = 0.5
RUNS = 3
PAGES = 4
"""read_file pages the subagent reads (50,000 characters each at most: 200,000 of the 5 MB log)."""


def _is_subagent(payload: dict[str, Any]) -> bool:
    return SUBAGENT_MARK in json.dumps(payload.get("messages", []))


def _results(payload: dict[str, Any]) -> int:
    return sum(1 for message in payload.get("messages", []) if message.get("role") == "tool")


def _task(call_id: str, description: str) -> tuple[str, str, str]:
    return (call_id, "task", json.dumps({"description": description,
                                         "prompt": "Read big.log and report every ERROR line with where it is."}))


def _responder(tasks: int, latency: float) -> Any:
    def respond(payload: dict[str, Any]) -> Reply:
        if _is_subagent(payload):
            time.sleep(latency)
            done = _results(payload)
            if done < PAGES:
                args = json.dumps({"path": "big.log", "offset": done * 600 + 1, "limit": 600})
                return Reply(tool_calls=((f"read_{done}", "read_file", args),))
            return Reply(text=ANSWER)
        if _results(payload) == 0:
            return Reply(tool_calls=tuple(_task(f"task_{n}", f"log part {n}") for n in range(tasks)))
        return Reply(text="done")
    return respond


def _write_log(path: Path) -> None:
    line = "2026-12-02 07:00:00 INFO request served in 12 ms from worker 7 of the pool\n"
    lines = [line] * (5_000_000 // len(line))
    for number in (10, len(lines) // 3, len(lines) - 5):
        lines[number] = "2026-12-02 07:00:00 ERROR disk full\n"
    path.write_text("".join(lines))


def _turn(root: Path, tasks: int, latency: float) -> tuple[float, list[dict[str, Any]]]:
    """(seconds for the turn, the requests the server received)."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "big.log").exists():
        _write_log(work / "big.log")
    with openai_chat_server(ChatServerState(responder=_responder(tasks, latency))) as (base_url, state):
        settings = Settings(base_url=base_url, provider=ProviderSettings(read_timeout=60))
        data = Path(tempfile.mkdtemp(dir=root))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(data), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))

        async def run() -> float:
            runtime = await factory.open_request(SessionRequest())
            try:
                with models.override_allow_model_requests(True):
                    started = time.perf_counter()
                    async for _event in runtime.run_turn("what went wrong in big.log?"):
                        pass
                    return time.perf_counter() - started
            finally:
                await runtime.aclose()

        elapsed = asyncio.run(run())
        return elapsed, list(state.requests)


def main() -> list[BenchResult]:
    root = Path(tempfile.mkdtemp(prefix="deep-tui-bench-subagents-"))
    _, requests = _turn(root, 1, 0.0)
    parent = [payload for payload in requests if not _is_subagent(payload)]
    sub = [payload for payload in requests if _is_subagent(payload)]
    growth = len(json.dumps(parent[1]["messages"])) - len(json.dumps(parent[0]["messages"]))
    call = parent[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    allowed = len(call) + len(ANSWER) + 300  # + the JSON framing of one call and its result
    read = sum(len(json.dumps(payload["messages"][-1])) for payload in sub[1:])
    one = statistics.median(_turn(root, 1, LATENCY)[0] for _ in range(RUNS))
    two = statistics.median(_turn(root, 2, LATENCY)[0] for _ in range(RUNS))
    return [
        result("subagent: parent context growth delegating a 5 MB log", growth, "chr", allowed),
        info("subagent: what the subagent read meanwhile (its own context)", read, "chr"),
        info("subagent: one task, wall time", one, "s"),
        result("subagent: two tasks in one response ÷ one task, wall time", two / one, "×", 1.3),
    ]


if __name__ == "__main__":
    from common import report

    report(main())
