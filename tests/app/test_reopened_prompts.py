"""A prompt with ``@path`` attachments and a ``!command`` read the same after a reopen (full history and the first
frame's tail) and in a fork as they did live: the typed text, an ``attached: …`` line, the output's live size."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelMessage

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.widgets.chat_blocks import NoticeBlock, ToolBlock, UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.history_blocks import original_lines
from tui.app.widgets.tail_blocks import least_rows, tail_blocks
from tui.base.paths import DataDir
from tui.store.session_tail import read_session_tail

SIZE = (80, 24)


def _shown(blocks: object) -> list[str]:
    """Each prompt, notice and command block as its text (a command: its title)."""
    shown: list[str] = []
    for block in blocks:  # type: ignore[attr-defined]
        if isinstance(block, (UserBlock, NoticeBlock)):
            shown.append(str(block.render()))
        elif isinstance(block, ToolBlock):
            shown.append(str(block.title))
    return shown


def _chat(app: DeepTuiApp) -> list[str]:
    return _shown(app.query_one(ChatView).query("UserBlock, NoticeBlock, ToolBlock"))


async def test_attachments_and_command_sizes_read_as_they_did_live(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    (factory.workdir / "src").mkdir()
    (factory.workdir / "src" / "util.py").write_text("x = 1\n")
    (factory.workdir / "listing.txt").write_text("".join(f"line {n}\n" for n in range(40)))
    app = make_app(factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"look at @src/util.py please", "enter")
        await wait_idle(app, pilot)
        await pilot.press(*"!cat listing.txt", "enter")

        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: app.query(ToolBlock) and "chars" in str(app.query(ToolBlock).last().title), "the command's end")
        live = _chat(app)
        session_id = app.runtime.info.session_id
        await app.runtime.aclose()
    assert live[:2] == ["you  look at @src/util.py please", "attached: src/util.py (6 bytes)"], live
    size = len("".join(f"line {n}\n" for n in range(40)))
    assert f"! cat listing.txt  ·  {size:,} chars" in live, live

    first_frame = tail_blocks(read_session_tail(DataDir(tmp_path / "data"), session_id, 20))
    assert [text for text in _shown(first_frame) if text in live] == _shown(first_frame)
    assert "attached: src/util.py (6 bytes)" in _shown(first_frame)
    assert f"! cat listing.txt  ·  {size:,} chars" in _shown(first_frame)
    assert not any("[@src/util.py" in text for text in _shown(first_frame))

    reopened = make_app(make_factory(tmp_path), SessionRequest(resume=session_id))
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: reopened.query(ToolBlock), "the reopened chat")
        await pilot.pause(0.2)
        again = _chat(reopened)
        assert again[:2] == live[:2] and f"! cat listing.txt  ·  {size:,} chars" in again, again
        assert not any("[@src/util.py" in text for text in again)

        # A fork at the command (Ctrl+F on its line, confirmed with a click) shows them the same way too.
        command_line = next(block for block in reopened.query(UserBlock) if block.text.startswith("!"))
        command_line.scroll_visible(animate=False)
        await pilot.pause()
        await pilot.click(command_line, offset=(2, 0))
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(reopened.screen, ConfirmModal), "the fork confirmation")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: reopened.runtime.info.parent == session_id, "the fork")
        await wait_idle(reopened, pilot)
        await wait_until(pilot, lambda: reopened.query(ToolBlock), "the fork's chat")
        assert _chat(reopened) == again
    assert original_lines(_recorded(tmp_path, session_id))[:2] == [
        ("you", "look at @src/util.py please"), ("", "attached: src/util.py (6 bytes)")]


def _recorded(tmp_path: Path, session_id: str) -> list[ModelMessage]:
    store = make_factory(tmp_path).store
    handle = store.open(session_id, read_only=True)
    return handle.messages.load_range(0, 2)


def test_a_prompt_with_an_attachment_counts_its_attached_line() -> None:
    plain = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": ["look at @a.py"]}]}
    attached = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": [
        "look at @a.py", '<attached-file path="a.py" bytes="6" kind="text">\nx = 1\n\n</attached-file>']}]}
    assert least_rows(attached, 80) == least_rows(plain, 80) + 1


def test_an_older_command_record_without_a_size_counts_its_output() -> None:
    from tui.text.user_command_text import context_text, output_chars

    context = context_text("ls", "a\nb\n", "[exit status 0 · 0.0 s]")
    assert output_chars({"command": "ls", "status": "[exit status 0 · 0.0 s]"}, context,
                        "[exit status 0 · 0.0 s]") == len("a\nb")
    assert output_chars({"chars": 383}, context, "[exit status 0 · 0.0 s]") == 383
    assert output_chars({"chars": True}, context, "[exit status 0 · 0.0 s]") == len("a\nb")


