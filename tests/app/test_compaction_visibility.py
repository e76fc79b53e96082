"""Every compaction is visible where it happened: a summary the guard rejected (it would have freed too little)
is a muted line in the chat, live and after reopening, and /context counts it; a summary that kept few of its
span's identifiers even after the second pass says how many on its divider and in the compact dialog."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from textual.widgets import Static

from tests.app.app_support import compact_dialog_opened, make_app, wait_idle, wait_until
from tests.app.test_snapshots import fixed_ids_and_clock  # noqa: F401  (autouse: fixed ids and clock)
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.context_report import ContextScreen
from tui.app.widgets.chat_blocks import CompactionDivider, NoticeBlock, UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.events import CompactionFailed, CompactionFinished
from tui.chain.summarizer import SUMMARIZER_INSTRUCTIONS

Summaries = Literal["bloated", "vague", "listing"]


def summarizing_factory(tmp_path: Path, summaries: Summaries, *,
                        window: int) -> tuple[RuntimeFactory, list[str]]:
    """A factory whose one model answers "noted." in the chat and, as the summarizer, writes ``bloated`` summaries
    (longer than what they summarize: the guard must reject an automatic one), ``vague`` ones (short,
    without a single identifier, even when a second pass lists them) or ``listing`` ones (vague, but a second pass
    writes every identifier it is given). Returns the summarizer prompts too."""
    prompts: list[str] = []

    def summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert SUMMARIZER_INSTRUCTIONS in (info.instructions or ""), "only the summarizer asks without streaming"
        prompt = str(messages[-1].parts[-1].content)
        prompts.append(prompt)
        if summaries == "listing" and "<must_include>" in prompt:
            listed = prompt.split("<must_include>")[1].split("</must_include>")[0]
            return ModelResponse(parts=[TextPart("## Exact values\n" + listed)])
        if summaries == "bloated":
            # longer than what it summarizes: it cannot bring the context below the compaction threshold either
            return ModelResponse(parts=[TextPart("## Session intent\n" + "much ado " * (len(prompt) // 5))])
        return ModelResponse(parts=[TextPart("## Session intent\nthe user asked questions; answers were given")])

    async def chat(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield "noted."

    model = FunctionModel(summarize, stream_function=chat, model_name="scripted")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    # not the offline stand-in: the chat model is the summarizer too, as with a real provider
    factory = RuntimeFactory(settings=Settings(context=ContextSettings(window=window)),
                             data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:gpt-4o", None), chat_model=model)
    return factory, prompts


def seed_session(factory: RuntimeFactory, pairs: int) -> str:
    """A recorded session of ``pairs`` questions and answers, each naming a file and a value in backticks."""
    handle = factory.store.create(model="scripted")
    batch: list[ModelMessage] = []
    for number in range(pairs):
        batch += [ModelRequest(parts=[UserPromptPart(f"question {number}: look at src/mod{number}.py and keep "
                                                     f"`ID-{number:04d}` " + "in mind " * 30)]),
                  ModelResponse(parts=[TextPart(f"answer {number} " * 40)])]
    handle.append_messages(batch)
    handle.close()
    return handle.id


def failed_lines(app: DeepTuiApp) -> list[str]:
    return [str(block.render()) for block in app.query_one(ChatView).query(".failed-compaction")]


async def test_a_rejected_automatic_summary_is_a_line_in_the_chat_counted_by_context_and_kept(
        tmp_path: Path) -> None:
    factory, prompts = summarizing_factory(tmp_path, "bloated", window=6_000)
    # Past the automatic threshold but short of what forces the pre-flight to compact anyway. The tools'
    # definitions count too: each new tool moves the history up this band (14 pairs were under the threshold,
    # 17 over the pre-flight's limit, with the tools of December 2026).
    session_id = seed_session(factory, 15)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go on", "enter")
        await wait_idle(app, pilot)
        failures = [e for e in app.runtime.past_events() if isinstance(e, CompactionFailed)]
        assert [e.trigger for e in failures] == ["auto"] and failures[0].freed_too_little, failures
        assert prompts, "the summarizer was asked"
        assert not [e for e in app.runtime.past_events() if isinstance(e, CompactionFinished)]
        [line] = failed_lines(app)
        failure = failures[0]
        assert line.startswith(f"compaction tried: a summary would only free {failure.would_free:,} of "
                               f"~{failure.tokens_estimated:,} tokens — kept the history as it is"), line
        assert "kept the history as it is" in line
        notice = app.query_one(".failed-compaction", NoticeBlock)
        users = list(app.query_one(ChatView).query(UserBlock))
        children = list(app.query_one(ChatView).children)
        assert children.index(users[-1]) < children.index(notice), "the line comes after the prompt it preceded"

        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        report = str(app.screen.query_one("#breakdown", Static).render())
        assert "0 compactions so far, 1 attempt that freed too little" in report
        await pilot.press("escape")
        await app.runtime.aclose()

    reopened = make_app(summarizing_factory(tmp_path, "bloated", window=6_000)[0], SessionRequest(resume=session_id))
    async with reopened.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: failed_lines(reopened), "the failed attempt's line after reopening")
        assert failed_lines(reopened) == [line]
        chat = reopened.query_one(ChatView)
        children = list(chat.children)
        notice = chat.query_one(".failed-compaction", NoticeBlock)
        prompt = next(block for block in reversed(children[:children.index(notice)]) if isinstance(block, UserBlock))
        assert "go on" in str(prompt.render()), "in the same place: right after the prompt it came before"


async def test_a_summary_that_keeps_few_identifiers_says_how_many_it_lacks(tmp_path: Path) -> None:
    factory, prompts = summarizing_factory(tmp_path, "vague", window=50_000)
    session_id = seed_session(factory, 12)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        await pilot.click("#compact-button")
        dialog = await compact_dialog_opened(app, pilot)
        await pilot.click("#run")
        await wait_until(pilot, lambda: dialog.result is not None, "the compaction")
        event = dialog.result
        assert isinstance(event, CompactionFinished) and event.retention_score is not None
        assert [bool("<must_include>" in prompt) for prompt in prompts] == [False, True], "a second pass was asked"
        assert "src/mod0.py" in prompts[1] and "ID-0000" in prompts[1]
        assert event.low_retention and event.missing == event.missing_count and event.missing > 0
        result = str(dialog.query_one("#result", Static).render())
        assert f"Low retention: {event.missing} identifiers of the summarized messages are not in the summary" \
            in result, result
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.query(CompactionDivider), "the divider")
        divider = app.query_one(CompactionDivider)
        expected_title = f"retention {event.retention_score:.2f} ⚠ {event.missing} identifiers missing"
        assert expected_title in str(divider.title)
        divider.collapsed = False
        await pilot.pause()
        listed = str(divider.query_one(".divider-missing", Static).render())
        assert listed.startswith(f"⚠ {event.missing} identifiers of the summarized messages are not in this summary")
        assert "src/mod0.py" in listed and "ID-0000" in listed
        await app.runtime.aclose()

    reopened = make_app(summarizing_factory(tmp_path, "vague", window=50_000)[0], SessionRequest(resume=session_id))
    async with reopened.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: reopened.query(CompactionDivider), "the divider after reopening")
        assert expected_title in str(reopened.query_one(CompactionDivider).title)


async def test_a_summary_that_keeps_its_identifiers_has_no_warning(tmp_path: Path) -> None:
    factory, prompts = summarizing_factory(tmp_path, "listing", window=50_000)
    session_id = seed_session(factory, 12)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.ready, "the session")
        event = await app.runtime.compact()
        assert isinstance(event, CompactionFinished)
        assert len(prompts) == 2 and event.retention_score is not None and event.retention_score >= 0.9
        assert not event.low_retention
        await wait_until(pilot, lambda: app.query(CompactionDivider), "the divider")
        divider = app.query_one(CompactionDivider)
        assert "⚠" not in str(divider.title) and not divider.query(".divider-missing")


def test_low_retention_divider_and_failed_attempt_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A summary recorded with retention 0.22 (7 identifiers missing; no event: its own record) above a failed
    attempt's line, as a reopened session shows them."""
    from pydantic_ai.messages import ModelRequest as Request

    from tests.app.app_support import make_factory
    from tui.chain.events import CompactionFailed as Failed
    from tui.chain.summary_message import make_summary_message

    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    batch: list[ModelMessage] = []
    for number in range(3):
        batch += [Request(parts=[UserPromptPart(f"question {number}")]), ModelResponse(parts=[TextPart("noted.")])]
    handle.append_messages(batch)
    handle.append_messages([make_summary_message("## Session intent\nthe user asked questions", strategy="summary",
                                                 kept_from=6, replaced=6, retention=0.22, missing=7)])
    handle.append_messages([Request(parts=[UserPromptPart("go on")])])
    handle.events.append(Failed(strategy="summary", trigger="auto", reason="rejected", tokens=4_754, would_free=34,
                                tokens_estimated=4_697, message_index=8, priced=True, cost_usd=0.01157,
                                cost_requests=2, timestamp=2_000_000_000.0).to_record())
    handle.append_messages([ModelResponse(parts=[TextPart("going on.")])])
    handle.close()

    async def expand(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.query_one(CompactionDivider).collapsed = False
        await pilot.pause()

    assert snap_compare(make_app(factory, SessionRequest(resume=handle.id)), terminal_size=(80, 24),
                        run_before=expand)
