"""An answer that stalls mid-way: the words already received are on screen while the status says it waits
(against the loopback OpenAI server, through the real HTTP path)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import models

from tests.app.app_support import make_app, wait_idle, wait_until
from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.growing_text import GrowingText
from tui.app.widgets.provider_status import ProviderStatus
from tui.base.config import ProviderSettings, Settings
from tui.base.paths import DataDir


def _shown_words(app) -> str:  # type: ignore[no-untyped-def]
    """The streaming answer's text that is inside the chat's visible region."""
    chat = app.query_one(ChatView)
    shown = []
    for tail in app.query(AssistantBlock).last().query(GrowingText):
        if tail.region.height and chat.region.intersection(tail.region).height:
            shown.append(tail.text)
    return "".join(shown)


async def test_words_received_before_a_stall_are_on_screen_while_waiting(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    state = ChatServerState(reply="one two three four five six", hang_cap=20.0)
    fail_with(state, Fault(chunks_before=3, hang=True))
    with openai_chat_server(state) as (base_url, _):
        work = tmp_path / "work"
        work.mkdir()
        settings = Settings(base_url=base_url, provider=ProviderSettings(read_timeout=6.0, retries=0))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:gpt-4o", None))
        app = make_app(factory)
        with models.override_allow_model_requests(True):
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.press(*"count", "enter")
                status = app.query_one(ProviderStatus)
                await wait_until(pilot, lambda: "(mid-answer)" in str(status.render()), "the mid-answer wait",
                                 timeout=8)
                assert _shown_words(app).split() == ["one", "two", "three"], _shown_words(app)
                await pilot.press("escape")
                await wait_idle(app, pilot)
