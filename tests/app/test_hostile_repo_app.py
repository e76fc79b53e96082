"""The app opened in a cloned repository whose ``.deep-tui/`` holds planted symlinks (issue 20.2).

The links are refused with one notification each naming the link; a prompt runs; the user's outside files
are unchanged and their text is in no request (instructions or messages, captured by a FunctionModel) and
in no file deep-tui wrote.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.app.app_support import OPENED, wait_idle, wait_until
from tests.support.hostile_repo import SESSION_LINKS, build_hostile_repo
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.run import opening_tail
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.cli.launch import LaunchContext, open_session
from tui.store.session_store import SessionStore


def _capturing_model(seen: list[str]) -> FunctionModel:
    """Records the instructions and messages of every request (streamed, as the app asks)."""

    def record(messages: list[ModelMessage], info: AgentInfo) -> None:
        seen.append(str(info.instructions))
        seen.append(ModelMessagesTypeAdapter.dump_json(messages).decode())

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        record(messages, info)
        return ModelResponse(parts=[TextPart("noted")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        record(messages, info)
        yield "noted"

    return FunctionModel(answer, stream_function=stream)


def _factory(project: Path, data: Path, seen: list[str]) -> RuntimeFactory:
    from tui.agent.models.choice import choose_model

    return RuntimeFactory(settings=Settings(), data_dir=DataDir(data), workdir=project,
                          choice=choose_model("offline", None), chat_model=_capturing_model(seen))


async def test_the_app_names_each_planted_link_and_leaks_nothing(tmp_path: Path) -> None:
    repo = build_hostile_repo(tmp_path, root_links=True)
    seen: list[str] = []
    factory = _factory(repo.project, repo.data, seen)
    runtime = factory.open_request_sync(SessionRequest(continue_latest=True))
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    OPENED.append(app)
    async with app.run_test(size=(120, 36)) as pilot:
        for name in ("MEMORY.md", "large_tool_results", "index.sqlite", "token_calibration.json"):
            link = str(repo.links[name])
            await wait_until(pilot, lambda link=link: any(link in str(n.message) for n in app._notifications),
                             f"the notification naming {name}")
            notes = [str(n.message) for n in app._notifications if str(n.message).startswith(link + " ")]
            assert len(notes) == 1, [str(n.message) for n in app._notifications]
            assert "symbolic link" in notes[0] and "\n" not in notes[0]
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: len(seen) >= 2, "the model request")
    assert "could not be read" in seen[0]  # the memory section says MEMORY.md was refused
    assert repo.leaked_into(seen) == []
    assert repo.changed_outside() == []
    written = [path.read_text(encoding="utf-8", errors="replace") for path in repo.files_written_inside()]
    assert repo.leaked_into(written) == []
    assert any("hello" in text for text in written)  # the turn was recorded (in the planted, clean session)


@pytest.mark.parametrize("link", SESSION_LINKS)
async def test_the_app_refuses_a_session_with_a_planted_file_link_in_one_line(tmp_path: Path, link: str) -> None:
    """The app as ``deep-tui --continue`` starts it: the first frame reads the session's tail, the opener opens
    it in a worker; a planted link ends the app with status 2 and one line naming it."""
    repo = build_hostile_repo(tmp_path, session_link=link)
    context = LaunchContext(Settings(), DataDir(repo.data), repo.project, "offline")
    request = SessionRequest(continue_latest=True)
    app = DeepTuiApp.opening(settings=context.settings, memory_path=context.data_dir.memory_file(),
                             data_root=context.data_dir.root, tail=opening_tail(context.data_dir, request),
                             opener=lambda: open_session(context, request))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, "the app to end itself")
    error = app.startup_error or ""
    assert app.return_code == 2 and "\n" not in error
    if link == "session.json":  # the session is skipped in the listing: there is none to continue
        assert "no session to continue" in error
        assert SessionStore(context.data_dir).list_sessions() == []
    else:
        assert str(repo.links[link]) in error and "symbolic link" in error
    assert repo.changed_outside() == []
    written = [path.read_text(encoding="utf-8", errors="replace") for path in repo.files_written_inside()]
    assert repo.leaked_into(written) == []
    assert repo.leaked_into([error]) == []
