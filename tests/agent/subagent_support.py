"""A session on the loopback OpenAI server whose replies depend on who asks: the session's agent or a subagent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import models

from tests.support.openai_server import Reply
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TurnEvent
from tui.base.config import ContextSettings, ProviderSettings, Settings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent

GUARD = 60.0
"""No test here may take longer than this, whatever the code under test does."""
SUBAGENT_MARK = "You are a subagent of deep-tui's assistant"


def is_subagent(payload: dict[str, Any]) -> bool:
    """Whether a request comes from a subagent (its instructions say so)."""
    return SUBAGENT_MARK in json.dumps(payload.get("messages", []))


def tool_results(payload: dict[str, Any]) -> list[str]:
    """The tool results the request carries, oldest first."""
    return [str(message.get("content")) for message in payload.get("messages", []) if message.get("role") == "tool"]


def user_text(payload: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in payload.get("messages", [])
                     if message.get("role") == "user")


def task_call(call_id: str, description: str, prompt: str, subagent_type: str | None = None) -> tuple[str, str, str]:
    args: dict[str, Any] = {"description": description, "prompt": prompt}
    if subagent_type is not None:
        args["subagent_type"] = subagent_type
    return (call_id, "task", json.dumps(args))


@dataclass
class Script:
    """The parent's replies (by how many tool results its request carries) and the subagents' (by a function)."""

    parent: list[Reply] = field(default_factory=list)
    subagent: Callable[[dict[str, Any]], Reply] = lambda payload: Reply(text="subagent answer")

    def __call__(self, payload: dict[str, Any]) -> Reply:
        if is_subagent(payload):
            return self.subagent(payload)
        turns = sum(1 for message in payload.get("messages", []) if message.get("role") == "assistant")
        return self.parent[min(turns, len(self.parent) - 1)] if self.parent else Reply(text="done")


@asynccontextmanager
async def loopback_session(tmp_path: Path, base_url: str, *, settings: Settings | None = None,
                           trusted_project: Path | None = None) -> AsyncIterator[SessionRuntime]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = settings or Settings(base_url=base_url, provider=ProviderSettings(read_timeout=GUARD))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:loopback", None), trusted_project=trusted_project)
    runtime = await factory.open_request(SessionRequest())
    try:
        with models.override_allow_model_requests(True):
            yield runtime
    finally:
        await runtime.aclose()


async def run_turn(runtime: SessionRuntime, prompt: str,
                   on_event: Callable[[TurnEvent], None] | None = None) -> list[TurnEvent]:
    """The turn's events, bounded by :data:`GUARD`."""
    events: list[TurnEvent] = []

    async def drive() -> None:
        async for event in runtime.run_turn(prompt):
            events.append(event)
            if on_event is not None:
                on_event(event)

    await asyncio.wait_for(drive(), GUARD)
    return events


def chain_events(runtime: SessionRuntime) -> list[ChainEvent]:
    return runtime.past_events()


def small_window(base_url: str, window: int) -> Settings:
    return Settings(base_url=base_url, provider=ProviderSettings(read_timeout=GUARD),
                    context=ContextSettings(window=window))
