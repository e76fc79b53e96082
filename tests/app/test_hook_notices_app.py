"""A hook's notice shows as a toast while the turn still runs (not only after it): the model's next answer is held
until the toast is on screen."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.agent.shell_support import requires_bwrap
from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.app.test_todo_app import submit
from tui.base.hooks_config import HookSettings, HookSpec

pytestmark = requires_bwrap


def held_model(gate: asyncio.Event) -> FunctionModel:
    """read_file notes.txt, then — once ``gate`` is set — "done"."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            await gate.wait()
            yield "done"
            return
        yield {0: DeltaToolCall(name="read_file", json_args=json.dumps({"path": "notes.txt"}), tool_call_id="r1")}

    return FunctionModel(stream_function=stream, model_name="held")


async def test_a_failing_hook_is_a_toast_during_the_turn(tmp_path: Path) -> None:
    gate = asyncio.Event()
    factory = make_factory(tmp_path, chat_model=held_model(gate))
    factory.settings = replace(factory.settings, hooks=HookSettings(
        pre_tool=(HookSpec("echo 'lint server down' >&2; exit 7", matcher="read_*"),)))
    app = make_app(factory)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "read the notes")
        await wait_until(pilot, lambda: any("lint server down" in str(n.message) for n in app._notifications),
                         "the hook's toast")
        assert app.runtime.busy  # the turn is still running: its answer waits for the gate
        [toast] = [n for n in app._notifications if "lint server down" in str(n.message)]
        assert str(toast.message).startswith("hook (pre_tool): ") and toast.severity == "warning"
        gate.set()
        await wait_idle(app, pilot)
        assert not app.runtime.busy
