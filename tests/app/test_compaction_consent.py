"""Issue 30 point 5 in the app: with automatic compaction off, a request that would not fit the window is never sent
as it is — the pre-flight asks first (summarize / evict only), and either answer leaves every request the model sees
inside the window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tests.app.app_support import armed_dialog, make_app, wait_idle, wait_until
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.screens.summary_consent import SummaryConsentScreen
from tui.app.widgets.prompt_input import PromptInput
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.estimate import TokenEstimator
from tui.chain.events import CompactionFinished
from tui.chain.summarizer import SUMMARIZER_INSTRUCTIONS

WINDOW = 6_000


class Scripted:
    """One model: the chat answers "noted." and records what each request carried; the summarizer writes a short
    summary and records its prompts."""

    def __init__(self) -> None:
        self.sent: list[list[ModelMessage]] = []
        self.summaries: list[str] = []

    def model(self) -> FunctionModel:
        def summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            assert SUMMARIZER_INSTRUCTIONS in (info.instructions or "")
            self.summaries.append(str(messages[-1].parts[-1].content))
            return ModelResponse(parts=[TextPart("## Session intent\nquestions about modules, all answered")])

        async def chat(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
            self.sent.append(list(messages))
            yield "noted."

        return FunctionModel(summarize, stream_function=chat, model_name="scripted")


def factory_off(tmp_path: Path, scripted: Scripted) -> tuple[RuntimeFactory, str]:
    """Automatic compaction off (the user's config), a 6k window, and a recorded session well over it."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = Settings(context=ContextSettings(window=WINDOW, auto_compact=False))
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:gpt-4o", None), chat_model=scripted.model())
    handle = factory.store.create(model="scripted")
    batch: list[ModelMessage] = []
    for number in range(30):
        batch += [ModelRequest(parts=[UserPromptPart(f"question {number}: look at src/mod{number}.py " + "and more " * 30)]),
                  ModelResponse(parts=[TextPart(f"answer {number} " * 40)])]
    handle.append_messages(batch)
    handle.close()
    return factory, handle.id


async def ask(pilot, app, text: str) -> SummaryConsentScreen:  # type: ignore[no-untyped-def]
    prompt = app.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")
    return await armed_dialog(pilot, SummaryConsentScreen, "the question before a summary")


def within_the_window(scripted: Scripted, app) -> None:  # type: ignore[no-untyped-def]
    """Every request the model saw, its instructions and tool definitions included, fits what a request may carry."""
    manager = app.runtime.manager
    assert scripted.sent, "the model was asked"
    for messages in scripted.sent:
        assert TokenEstimator().total(messages) + manager.fixed_tokens <= manager.limit


async def test_evict_only_sends_no_summary_and_nothing_over_the_window(tmp_path: Path) -> None:
    scripted = Scripted()
    factory, session_id = factory_off(tmp_path, scripted)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        dialog = await ask(pilot, app, "go on")
        assert "Automatic compaction is off" in str(dialog.query_one("#consent-text").render())
        assert dialog.tokens > dialog.limit == app.runtime.manager.limit  # type: ignore[attr-defined]
        await pilot.press("e")
        await wait_until(pilot, lambda: not isinstance(app.screen, SummaryConsentScreen), "the answer")
        await wait_idle(app, pilot)
        assert scripted.summaries == []  # no summary was asked for
        strategies = {e.strategy for e in app.runtime.past_events() if isinstance(e, CompactionFinished)}
        assert strategies and strategies <= {"pointer", "fallback"}
        within_the_window(scripted, app)
        await app.runtime.aclose()


async def test_summarize_clicked_runs_a_summary_and_the_request_fits(tmp_path: Path) -> None:
    scripted = Scripted()
    factory, session_id = factory_off(tmp_path, scripted)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        await ask(pilot, app, "go on")
        await pilot.click("#summarize")
        await wait_until(pilot, lambda: not isinstance(app.screen, SummaryConsentScreen), "the answer")
        await wait_idle(app, pilot)
        assert scripted.summaries, "the summarizer was asked"
        assert "summary" in {e.strategy for e in app.runtime.past_events() if isinstance(e, CompactionFinished)}
        within_the_window(scripted, app)
        await app.runtime.aclose()


async def test_evict_only_clicked(tmp_path: Path) -> None:
    scripted = Scripted()
    factory, session_id = factory_off(tmp_path, scripted)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        await ask(pilot, app, "go on")
        await pilot.click("#evict")
        await wait_until(pilot, lambda: not isinstance(app.screen, SummaryConsentScreen), "the answer")
        await wait_idle(app, pilot)
        assert scripted.summaries == []
        within_the_window(scripted, app)
        await app.runtime.aclose()
