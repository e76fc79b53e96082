"""Honest figures through a real session: the answer is counted, a fork counts its own messages."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.store import SessionStore


def _factory(tmp_path: Path) -> RuntimeFactory:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("".join(f"note {n}: the value is {n * 7}\n" for n in range(300)))
    return RuntimeFactory(settings=Settings(context=ContextSettings(window=50_000)), data_dir=DataDir(tmp_path / "data"),
                          workdir=work, choice=choose_model("offline", None))


async def _turn(runtime, prompt: str) -> None:  # type: ignore[no-untyped-def]
    async for _ in runtime.run_turn(prompt):
        pass


def test_the_usage_after_a_turn_counts_its_answer_and_is_what_sessions_shows(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    runtime = factory.open_request_sync(SessionRequest())
    asyncio.run(_turn(runtime, "read notes.txt"))
    usage = runtime.last_usage
    assert usage is not None and usage.final, "the last figure includes the last answer"
    estimate = runtime.manager.estimate_usage(runtime.messages).tokens
    assert abs(usage.tokens - estimate) <= 0.05 * estimate, (usage.tokens, estimate)
    recorded = SessionStore(factory.data_dir).meta(runtime.info.session_id).last_usage
    assert recorded is not None and recorded.tokens == usage.tokens, "session.json (deep-tui sessions) agrees"
    asyncio.run(runtime.aclose())


def test_a_partial_fork_counts_its_own_messages_not_its_parents(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    runtime = factory.open_request_sync(SessionRequest())
    for _ in range(3):
        asyncio.run(_turn(runtime, "read notes.txt"))
    parent_tokens = runtime.last_usage.tokens  # type: ignore[union-attr]
    session_id = runtime.info.session_id
    asyncio.run(runtime.aclose())
    fork = asyncio.run(factory.fork_session(session_id, upto=4))
    assert fork.last_usage is not None
    assert fork.last_usage.tokens < parent_tokens / 2, (fork.last_usage.tokens, parent_tokens)
    assert fork.last_usage.tokens == fork.manager.estimate_usage(fork.messages).tokens
    asyncio.run(fork.aclose())
    whole = asyncio.run(factory.fork_session(session_id))
    assert whole.last_usage is not None and whole.last_usage.tokens == parent_tokens
    asyncio.run(whole.aclose())
