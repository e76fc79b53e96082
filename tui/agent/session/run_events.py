"""A run's stream events, produced in the caller's own task (no hand-off to a background task per event).

``Agent.run_stream_events`` runs the agent in a background task and hands every event over a
zero-buffer memory stream: one task switch and a few anyio checkpoints per event (~25 µs here, a
third of pydantic-ai's own per-delta cost with a FunctionModel; the runtime alone was ~20% slower
than a bare ``run_stream`` on the OpenAI chat stream, ~5% after; ``bench/bench_stream.py``). Here the
run is driven with ``Agent.iter`` and each model-request / tool-call node is streamed with
``node.stream`` before it is advanced, which is what ``Agent.run(event_stream_handler=...)`` does: the
same events in the same order, the same model-request and tool hooks (they fire inside the node's
stream), the same result. An asyncio cancellation of the caller (Esc) reaches the run directly and
carries the run's state (``RunCancelled.from_cancellation``), as with ``run_stream_events``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from pydantic_ai import Agent
from pydantic_ai.messages import AgentStreamEvent, ModelMessage, UserContent
from pydantic_ai.run import AgentRunResult
from pydantic_graph import End


async def run_events(
    agent: Agent[None, Any],
    prompt: str | Sequence[UserContent],
    *,
    message_history: Sequence[ModelMessage],
    workspace: Literal["new"] | None = None,
) -> AsyncIterator[AgentStreamEvent | AgentRunResult[Any]]:
    """Every stream event of one run of ``agent``, then its :class:`AgentRunResult` (last, exactly once).

    Errors of the run (provider, tool, configuration, cancellation) propagate from here as they would from
    ``run_stream_events``. The consumer must iterate to the end (or be cancelled): the run lives in this
    generator's frame.
    """
    async with agent.iter(prompt, message_history=message_history, workspace=workspace) as run:
        node = run.next_node
        while not isinstance(node, End) and run.result is None:
            if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    async for event in events:
                        yield event
            node = await run.next(node)
    result = run.result
    if result is None:  # pragma: no cover - iter() finishes with a result or raises
        raise RuntimeError("the run ended without a result")
    yield result
