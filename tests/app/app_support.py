"""Build the real app around a real session (store, chain, agent) with a local model."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.approval_dialog import ApprovalDialog
from tui.app.screens.compact_dialog import CompactDialog
from tui.base.config import ContextSettings, Settings, ToolSettings
from tui.base.paths import DataDir


def make_factory(tmp_path: Path, *, chat_model: Model | None = None, window: int | None = None,
                 writes: str = "ask") -> RuntimeFactory:
    """``writes``: the ``[tools] writes`` policy (``always`` for a test about something else than approval)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("alpha\nbeta\n")
    settings = Settings(context=ContextSettings(window=window), tools=ToolSettings(writes=writes))
    return RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                          choice=_offline_choice(), chat_model=chat_model)


def _offline_choice():  # type: ignore[no-untyped-def]
    """No model set (the offline stand-in), as a new user first meets the app: what the snapshots show."""
    from tui.agent.models.choice import choose_model

    return choose_model(None, None, {})


OPENED: list[DeepTuiApp] = []
"""Apps made by :func:`make_app` in the running test; the conftest closes their runtimes afterwards
(even when the test failed), so no session lock outlives its test."""


def make_app(factory: RuntimeFactory, request: SessionRequest | None = None) -> DeepTuiApp:
    runtime = factory.open_request_sync(request or SessionRequest())
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    OPENED.append(app)
    return app


def spec_factory(tmp_path: Path) -> RuntimeFactory:
    """A factory with an 8,000-token window and a ``spec.txt`` of 80 requirement lines in its workdir: reading it
    three times (:func:`read_spec_three_times`) fills most of the window, so a summary must shrink it."""
    factory = make_factory(tmp_path, window=8_000)
    (factory.workdir / "spec.txt").write_text("".join(
        f"requirement {n}: the parser accepts input form {n} and keeps ID-{n:04d}\n" for n in range(80)))
    return factory


async def read_spec_three_times(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """Three turns that read the :func:`spec_factory` spec (the offline model's tool call), each to its end."""
    for _ in range(3):
        await pilot.press(*"read spec.txt", "enter")
        await wait_idle(app, pilot)


def app_on_a_long_session(tmp_path: Path, model: FunctionModel, *, window: int | None = None) -> DeepTuiApp:
    """The app talking to ``model``, resumed on a recorded session of 12 long questions and answers (each keeps an
    ID): enough history for a summary to free much of the window."""
    factory = make_factory(tmp_path, chat_model=model, window=window)
    handle = factory.store.create(model=model.model_name)
    batch: list[ModelMessage] = []
    for number in range(12):
        batch += [ModelRequest(parts=[UserPromptPart(f"question {number}: keep ID-{number:04d} " * 40)]),
                  ModelResponse(parts=[TextPart(f"answer {number} " * 60)])]
    handle.append_messages(batch)
    handle.close()
    return make_app(factory, SessionRequest(resume=handle.id))


async def compact_dialog_opened(app: DeepTuiApp, pilot) -> CompactDialog:  # type: ignore[no-untyped-def]
    """The compact dialog, once the key, click or command that opens it has."""
    await wait_until(pilot, lambda: isinstance(app.screen, CompactDialog), "the compact dialog")
    dialog = app.screen
    assert isinstance(dialog, CompactDialog)
    return dialog


Dialog = TypeVar("Dialog", bound=ApprovalDialog[Any])


async def armed_dialog(pilot, kind: type[Dialog], what: str) -> Dialog:  # type: ignore[no-untyped-def]
    """The ``kind`` approval dialog once it is open (``what`` names it if it never opens) and armed: its keys
    answer only from then on."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, kind), what)
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    await wait_until(pilot, lambda: screen.armed, "the dialog's keys to answer")
    return screen


async def dialog_answered(app: DeepTuiApp, pilot, kind: type[ApprovalDialog[Any]]) -> None:  # type: ignore[no-untyped-def]
    """Until the ``kind`` dialog has closed and the turn it held up has finished."""
    await wait_until(pilot, lambda: not isinstance(app.screen, kind), "the dialog to close")
    await wait_idle(app, pilot)


PATIENCE = float(os.environ.get("DEEP_TUI_TEST_PATIENCE", "180"))
"""How long a test waits for something before it calls it a hang. A guard, never a timing: every wait ends as soon as
what it waits for has happened, so a loaded 2-core machine (where a sandboxed command can take seconds to start) only
makes a test slower, never failed. ``DEEP_TUI_TEST_PATIENCE`` changes it (in seconds)."""


async def wait_until(pilot, condition: Callable[[], object], what: str = "the condition",  # type: ignore[no-untyped-def]
                     timeout: float | None = None) -> None:
    """Let the app run until ``condition()`` is true: checked after the app has handled what is pending, then at
    every turn of its event loop (a few ms apart). Fails the test, naming ``what``, only if it never happens
    (:data:`PATIENCE`; a ``timeout`` can only make that longer, never shorter)."""
    loop = asyncio.get_running_loop()
    patience = max(PATIENCE, timeout or 0.0)
    deadline = loop.time() + patience
    await pilot.pause()
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"{what} never happened (waited {patience:g} s: a hang, or DEEP_TUI_TEST_PATIENCE "
                                 "is too low for this machine)")
        await pilot.pause(0.01)


def slow_model(text: str = "slow answer " * 40, delay: float = 0.05) -> FunctionModel:
    """Streams ``text`` word by word with a pause between words (to cancel or switch mid-stream)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for word in text.split(" "):
            await asyncio.sleep(delay)
            yield word + " "

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    return FunctionModel(whole, stream_function=stream, model_name="slow")


def gated_model(first: str = "partial answer") -> tuple[FunctionModel, asyncio.Event]:
    """Streams ``first``, then holds every turn open until the returned event is set (call it inside the
    test's event loop): a turn that stays "running" for exactly as long as the test needs."""
    gate = asyncio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield first + " "
        await gate.wait()
        yield "and the rest."

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(first)]), stream_function=stream,
                         model_name="gated"), gate


def reply_model(text: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for start in range(0, len(text), 7):
            yield text[start:start + 7]

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(text)]), stream_function=stream,
                         model_name="scripted")


async def wait_idle(app: DeepTuiApp, pilot, timeout: float | None = None) -> None:  # type: ignore[no-untyped-def]
    """Until the running turn (if any) has finished, every worker it started has ended and the screen settled
    (``timeout`` as in :func:`wait_until`)."""
    await pilot.pause()
    await wait_until(pilot, lambda: not app.runtime.busy, "the end of the turn", timeout)
    pending = [worker for worker in app.workers if worker.group != "memory-watch"]
    if pending:  # an empty list would mean "every worker", including the endless file watcher
        await asyncio.wait_for(app.workers.wait_for_complete(pending), max(PATIENCE, timeout or 0.0))
    await pilot.pause()
