"""The floor of the real-terminal streaming benchmark: a bare pydantic-ai agent printing deltas to its terminal.

Run inside a tmux pane by ``bench_terminal_stream.py`` with ``OPENAI_BASE_URL`` pointing at the loopback
chat server; ``argv[1]`` is the model string deep-tui is given (``openai-chat:...``). Once imported it says
so and waits for Enter (start-up is not measured, as the app's is not); then each delta is written and
flushed as it arrives, as the simplest streaming CLI would.
"""

from __future__ import annotations

import asyncio
import sys


async def _stream(model: str) -> None:
    import pydantic_ai
    from pydantic_ai import Agent

    pydantic_ai.BANNER_ENABLED = False
    agent = Agent(model)
    out = sys.stdout
    out.write("bare agent ready: Enter streams\n")
    out.flush()
    await asyncio.to_thread(sys.stdin.readline)
    async with agent.run_stream("go") as run:
        async for delta in run.stream_text(delta=True, debounce_by=None):
            out.write(delta)
            out.flush()
    out.write("\n[bare agent done]\n")
    out.flush()


if __name__ == "__main__":
    asyncio.run(_stream(sys.argv[1]))
