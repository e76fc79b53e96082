"""The App's stylesheet parses each source once while the CSS variables stay the same, and re-parses them all for a
new theme."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.color import Color

from tests.app.app_support import make_app, make_factory, wait_until
from tui.app.stable_stylesheet import StableStylesheet

CSS = "Static { color: $accent; }"


def _stylesheet(accent: str) -> StableStylesheet:
    stylesheet = StableStylesheet(variables={"accent": accent})
    stylesheet.add_source(CSS, read_from=("test.tcss", ""))
    stylesheet.parse()
    return stylesheet


def _color(stylesheet: StableStylesheet) -> Color:
    (rule,) = stylesheet.rules
    return rule.styles.color


def test_the_same_variables_keep_the_parsed_rules() -> None:
    stylesheet = _stylesheet("#ff0000")
    parsed = stylesheet.rules[0]
    stylesheet.set_variables({"accent": "#ff0000"})  # as App.refresh_css does, with the theme unchanged
    stylesheet.reparse()
    assert stylesheet.rules[0] is parsed  # not parsed again
    assert _color(stylesheet) == Color.parse("#ff0000")


def test_new_variables_parse_every_source_again() -> None:
    stylesheet = _stylesheet("#ff0000")
    parsed = stylesheet.rules[0]
    stylesheet.set_variables({"accent": "#00ff00"})
    stylesheet.reparse()
    assert stylesheet.rules[0] is not parsed
    assert _color(stylesheet) == Color.parse("#00ff00")


def test_a_source_added_later_is_parsed_with_the_others_kept() -> None:
    stylesheet = _stylesheet("#ff0000")
    parsed = stylesheet.rules[0]
    stylesheet.add_source("Label { color: $accent; }", read_from=("later.tcss", ""))
    stylesheet.parse()  # as Textual does when a widget class is mounted for the first time
    assert stylesheet.rules[0] is parsed
    assert len(stylesheet.rules) == 2


async def test_the_app_uses_it_and_a_new_theme_still_restyles_the_screen(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.stylesheet, StableStylesheet)
        screen = app.main_screen
        dark = screen.styles.background
        app.theme = "textual-light"
        light = app.get_theme("textual-light")
        assert light is not None and light.background is not None
        expected = Color.parse(light.background)
        await wait_until(pilot, lambda: screen.styles.background == expected, "the light theme's background")
        assert screen.styles.background != dark


async def test_a_configured_theme_styles_the_first_frame(tmp_path: Path) -> None:
    """A theme from the config colours the app from the start (the stylesheet takes its variables at once)."""
    factory = make_factory(tmp_path)
    factory.settings = replace(factory.settings, theme="nord")
    app = make_app(factory)
    nord = app.get_theme("nord")
    assert nord is not None and nord.background is not None
    async with app.run_test(size=(100, 30)):
        assert app.main_screen.styles.background == Color.parse(nord.background)
