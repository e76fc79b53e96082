"""/model's list: the model in use shows the window the session resolved (the gauge's), the offline model "–",
long names are cut with "…" and the window column stays aligned, the hint is never cut (80 and 60 columns)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import OptionList, Static

from tests.app.app_support import make_app, make_factory, wait_until
from tui.app.screens.model_chooser import HINT, ModelChooser
from tui.app.widgets.title_bar import TitleBar


def _rows(chooser: ModelChooser) -> list[str]:
    options = chooser.query_one("#models", OptionList)
    return [str(options.get_option_at_index(index).prompt) for index in range(options.option_count)]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_windows_names_and_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    app = make_app(make_factory(tmp_path, window=100_000))  # config's window wins over the model's
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelChooser), "the chooser")
        chooser = app.screen
        assert isinstance(chooser, ModelChooser)
        await pilot.pause()
        offline = _rows(chooser)[0]
        assert offline.startswith("offline ") and offline.split()[1] == "–", offline

        hint = chooser.query_one(".dialog--hint", Static)
        assert " ".join(str(hint.render()).split()) == HINT and "…" not in str(hint.render())
        if size[0] >= 80:
            assert hint.content_region.height == 1, "the hint fits one line at 80 columns"
        else:
            assert hint.content_region.height == 2, "at 60 columns it wraps, whole"

        await pilot.press(*"realtime")
        await pilot.pause()
        rows = _rows(chooser)
        assert any("…" in row.split()[0] for row in rows), rows
        columns = {row.index(row.split()[1]) + len(row.split()[1]) for row in rows}
        assert len(columns) == 1, ("the window column is aligned", rows)
        options = chooser.query_one("#models", OptionList)
        name_and_window = [row[:next(iter(columns))] for row in rows]
        assert all(cell_len(part) < options.scrollable_content_region.width for part in name_and_window)

        await pilot.press("escape")
        await pilot.press(*"/model openai:gpt-4o", "enter")
        await wait_until(pilot, lambda: "openai:gpt-4o" in str(app.query_one(TitleBar).render()), "the switch")
        assert app.runtime.context_window == 100_000
        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelChooser), "the chooser again")
        chooser = app.screen
        assert isinstance(chooser, ModelChooser)
        await pilot.pause()
        in_use = _rows(chooser)[0]
        assert in_use.split()[:3] == ["openai:gpt-4o", "100k", "in"], in_use
        assert _rows(chooser)[1].split()[:2] == ["offline", "–"]
