"""The one definition of terminal-safe text: what it defuses and what it leaves alone."""

from __future__ import annotations

import pytest

from tui.text.terminal_text import encodable, visible, visible_json


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[2J", "␛[2J"),
    ("bell\x07", "bell␇"),
    ("c1\x9b31m", "c1\N{REPLACEMENT CHARACTER}31m"),
    ("line\r\nnext\rlast", "line\nnext\nlast"),
    ("invoice\u202egpj.exe", "invoice[U+202E]gpj.exe"),
    ("a\u2066b\u2069c", "a[U+2066]b[U+2069]c"),
    ("lone \ud800 surrogate", "lone \N{REPLACEMENT CHARACTER} surrogate"),
])
def test_hostile_characters_are_made_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    visible(raw).encode("utf-8")


@pytest.mark.parametrize("text", ["plain text", "tabs\tand\nnewlines", "שלום עולם", "مرحبا", "emoji 🎉", "mark\u200f"])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert visible(text) == text


def test_json_strings_are_defused_inside_so_decoding_cannot_bring_escapes_back() -> None:
    shown = visible_json('{"path": "a\\u001b[2J\\u202eb"}')
    assert "\\u001b" not in shown and "\x1b" not in shown and "\u202e" not in shown
    assert "[U+202E]" in shown


def test_encodable_replaces_only_surrogates() -> None:
    assert encodable("\x1b ok \ud800") == "\x1b ok \N{REPLACEMENT CHARACTER}"
