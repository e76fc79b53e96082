"""Pygments highlighting for the evicted-output viewer (no tree-sitter needed)."""

from __future__ import annotations

from tui.app.widgets.highlighted_text import highlight_ranges


def test_json_tokens_map_to_textarea_highlight_names_with_byte_offsets() -> None:
    text = '{\n  "name": "x ✓",\n  "count": 12,\n  "ok": true\n}'
    ranges = highlight_ranges(text, "json")
    assert (2, 8, "json.label") in ranges[1]
    assert (10, 17, "string") in ranges[1], "the ✓ counts three bytes, as TextArea expects"
    assert (11, 13, "number") in ranges[2]
    assert (8, 12, "boolean") in ranges[3]


def test_python_keywords_strings_and_comments() -> None:
    ranges = highlight_ranges('def run():\n    return "ok"  # done\n', "python")
    names = {name for line in ranges.values() for _, _, name in line}
    assert {"keyword", "function", "string", "comment"} <= names


def test_unknown_language_is_plain() -> None:
    assert highlight_ranges("anything", "no-such-language") == {}
