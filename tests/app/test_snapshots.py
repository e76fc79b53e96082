"""Snapshots of the main screen and its dialogs (deterministic: fixed ids, fixed clock, local model)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from textual.widgets import Button
from textual.widgets._collapsible import CollapsibleTitle

from tests.app.app_support import gated_model, make_app, make_factory, wait_idle, wait_until
from tui.agent.session.factory import SessionRequest
from tui.app.screens.basic_dialogs import ConfirmModal, PromptModal
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import CompactionDivider, ToolBlock
from tui.app.widgets.gauge import ContextGauge
from tui.chain.events import UsageEvent
from tui.chain.summary_message import make_summary_message

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def fixed_ids_and_clock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # paths on screen (the welcome's config.toml) are shown relative to it
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(tmp_path / "config"))  # the welcome names the user's config
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")
    monkeypatch.setattr("tui.app.screens.session_picker.time.time", lambda: 2_000_000_000.0)
    monkeypatch.setattr("tui.store.meta.time.time", lambda: 2_000_000_000.0 - 120)
    monkeypatch.setattr("tui.store.handle.time.time", lambda: 2_000_000_000.0 - 120)


def seeded_app(tmp_path: Path, *, with_summary: bool = False, extra_session: bool = False):  # type: ignore[no-untyped-def]
    factory = make_factory(tmp_path)
    if extra_session:
        other = factory.store.create(model="offline")
        other.append_messages([ModelRequest(parts=[UserPromptPart("an older [bold] experiment")]),
                               ModelResponse(parts=[TextPart("done")])])
        other.close()
    handle = factory.store.create(model="offline")
    messages = [
        ModelRequest(parts=[UserPromptPart("make the tokenizer handle CRLF")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "tokenizer.py"}, "call-1")]),
        ModelRequest(parts=[ToolReturnPart("read_file", "     1\tdef tokenize(text):\n     2\t    return text.split()",
                                           "call-1")]),
        ModelResponse(parts=[TextPart("The tokenizer now normalizes `\\r\\n` before splitting; **tests pass**.")]),
    ]
    handle.append_messages(messages)
    if with_summary:
        handle.append_messages([make_summary_message(
            "## Session intent\nMake the tokenizer robust.\n## Next steps\nThe lexer.", strategy="summary",
            kept_from=4, replaced=4, retention=0.97)])
        handle.append_messages([ModelRequest(parts=[UserPromptPart("now the lexer")])])
    handle.close()
    return make_app(factory, SessionRequest(resume=handle.id))


async def open_the_picker(pilot) -> None:  # type: ignore[no-untyped-def]
    """Ctrl+S, and the listing read from disk."""
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionPickerScreen), "the picker")
    await wait_idle(pilot.app, pilot)


def test_empty_session(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=SIZE)


def test_answer_with_tool_calls(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def expand(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.query(ToolBlock).first().collapsed = False
        await pilot.pause()

    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, run_before=expand)


def test_streamed_offline_answer(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(pilot.app, pilot)
        answer = pilot.app.query(AssistantBlock).last()
        await wait_until(pilot, lambda: answer.source.strip() == answer.received.strip(), "the last fragment")
        # the tool's title takes its result's size after a refresh (CI once caught it before)
        tool = pilot.app.query_one(ToolBlock)
        # … and its new width is laid out after another (a snapshot taken between showed the title cut short)
        title = tool.query_one(CollapsibleTitle)
        await wait_until(pilot, lambda: "chars" in str(title.label) and title.size.width >= title.label.cell_length + 2,
                         "the tool's result in its title, laid out")
        await pilot.pause()

    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=SIZE, run_before=ask)


@pytest.mark.parametrize("fraction", [0.30, 0.86, 0.95])
def test_gauge_levels(snap_compare, tmp_path: Path, fraction: float) -> None:  # type: ignore[no-untyped-def]
    async def set_usage(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.usage = UsageEvent(tokens=int(fraction * 200_000), window=200_000,
                                     window_source="model", reserve=16_000, margin=10_000)
        await wait_until(pilot, lambda: pilot.app.query_one(ContextGauge).usage is pilot.app.usage, "the gauge")

    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=(100, 12), run_before=set_usage)


def test_compact_dialog(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, press=["ctrl+g", *"API decisions"])


def test_context_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, press=["f2"])


def test_help_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, press=["f1"])


def test_session_picker(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def open_picker(pilot) -> None:  # type: ignore[no-untyped-def]
        await open_the_picker(pilot)

    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, run_before=open_picker)


def test_divider_expanded(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def expand(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.query_one(CompactionDivider).collapsed = False
        await pilot.pause()
        pilot.app.query_one(".divider-show", Button).press()
        await wait_until(pilot, lambda: pilot.app.query(".original-line"), "the replaced messages")
        button = pilot.app.query_one(".divider-show", Button)
        await wait_until(pilot, lambda: str(button.label) == CompactionDivider.HIDE, "the button to offer hiding them")
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(seeded_app(tmp_path, with_summary=True), terminal_size=SIZE, run_before=expand)


def test_small_terminal(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(seeded_app(tmp_path), terminal_size=(80, 24))


def test_rename_dialog(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def rename(pilot) -> None:  # type: ignore[no-untyped-def]
        await open_the_picker(pilot)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PromptModal), "the rename dialog")

    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, run_before=rename)


def test_delete_confirmation(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def delete_other(pilot) -> None:  # type: ignore[no-untyped-def]
        await open_the_picker(pilot)
        await pilot.press("down")  # the seeded session, not the one open now
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "the delete confirmation")

    assert snap_compare(seeded_app(tmp_path, extra_session=True), terminal_size=SIZE, run_before=delete_other)


def test_prompt_queued_while_a_turn_streams(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def queue(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await pilot.press(*"first question", "enter")
        await wait_until(pilot, lambda: app.runtime.busy and app.query("AssistantBlock"), "the turn to stream")
        await pilot.press(*"and then [this] one", "enter")
        await pilot.press(*"/co")
        await wait_until(pilot, lambda: app.query_one("#suggestions").display, "the completion list")

    model, _gate = gated_model("Working on it")
    assert snap_compare(make_app(make_factory(tmp_path, chat_model=model)), terminal_size=SIZE, run_before=queue)


def test_fork_confirmation(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def fork_here(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.query("UserBlock").first().focus()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: pilot.app.screen is not pilot.app.screen_stack[0], "the confirmation")
        await pilot.pause()

    assert snap_compare(seeded_app(tmp_path), terminal_size=SIZE, run_before=fork_here)


STREAMED_WITH_CODE = """The tokenizer, **fixed**:

```python
def tokenize(text: str) -> list[str]:
    \"\"\"Split on whitespace after normalizing line endings.\"\"\"
    return text.replace("\\r\\n", "\\n").split()
```

- handles `\\r\\n`
- keeps tabs
"""


def test_streamed_answer_with_code(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A streamed answer once complete: settled Markdown segments, the fence highlighted, lists joined."""
    from tests.app.test_streaming import line_model

    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*"fix the tokenizer", "enter")
        await wait_idle(pilot.app, pilot)
        await pilot.pause(0.2)

    app = make_app(make_factory(tmp_path, chat_model=line_model(STREAMED_WITH_CODE, delay=0.02)))
    assert snap_compare(app, terminal_size=SIZE, run_before=ask)


def test_streaming_an_open_code_fence(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Mid-stream: the settled paragraph is Markdown, the open fence is plain code in the growing tail."""

    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        app = pilot.app
        await pilot.press(*"fix the tokenizer", "enter")
        await wait_until(pilot, lambda: app.query("GrowingText.-code")
                         and "split()" in app.query_one("GrowingText.-code").text, "the open fence")
        await pilot.pause(0.2)

    model, _gate = gated_model(STREAMED_WITH_CODE.split("```\n\n")[0])
    assert snap_compare(make_app(make_factory(tmp_path, chat_model=model)), terminal_size=SIZE, run_before=ask)
