"""The splitter that decides which blocks of a streamed answer have closed, and the growing tail's wrap."""

from __future__ import annotations

import random

from markdown_it import MarkdownIt

from tui.app.markdown_blocks import MarkdownSplitter
from tui.app.widgets.growing_text import wrap_line

DOCUMENT = """# Title

Some paragraph text that goes
on for two lines.

- item one
- item two
  continued

- item three

1. first
2. second

```python
def f():

    return 1
```
Text after the fence
---
> a quote
> more

* star list
* again

Final words with `code` and **bold**."""


def _split(text: str, seed: int) -> tuple[list[tuple[str, bool]], str]:
    rng = random.Random(seed)
    splitter = MarkdownSplitter()
    closed: list[tuple[str, bool]] = []
    position = 0
    while position < len(text):
        size = rng.randint(1, 9)
        blocks = splitter.feed(text[position:position + size])
        position += size
        if blocks.text:
            closed.append((blocks.text, blocks.continues_list))
    return closed, splitter.finish()


def test_closed_blocks_and_the_rest_are_exactly_the_text_whatever_the_chunking() -> None:
    for seed in range(40):
        closed, rest = _split(DOCUMENT, seed)
        assert "".join(text for text, _ in closed) + rest == DOCUMENT


def test_each_closed_piece_parses_to_whole_top_level_blocks() -> None:
    """A piece never ends inside a block: parsed alone, it gives the same top-level blocks as in the
    whole document (same types, same order)."""
    parser = MarkdownIt("gfm-like")

    def top_level(text: str) -> list[str]:
        return [token.type for token in parser.parse(text) if token.level == 0 and token.nesting >= 0
                and token.type not in ("inline",)]

    closed, rest = _split(DOCUMENT, 3)
    pieces = [text for text, _ in closed] + [rest]
    assert "```python\ndef f():\n\n    return 1\n```\n" in pieces, "blank lines inside a fence do not close it"
    whole = [kind for kind in top_level(DOCUMENT) if not kind.endswith("_list_open")]
    joined = [kind for piece in pieces for kind in top_level(piece) if not kind.endswith("_list_open")]
    assert joined == whole


def test_list_items_settle_one_by_one_and_say_they_continue_the_list() -> None:
    splitter = MarkdownSplitter()
    first = splitter.feed("- one\n- two\n")
    assert first.text == "- one\n" and not first.continues_list
    second = splitter.feed("- three\n")
    assert second.text == "- two\n" and second.continues_list
    other = splitter.feed("1. numbered\n")
    assert other.text == "- three\n" and other.continues_list
    ended = splitter.feed("\nafter\n")
    assert ended.text == "1. numbered\n\n" and not ended.continues_list
    assert splitter.open_text == "after\n" and splitter.open_kind == "text"


def test_an_open_fence_is_code_until_its_closing_line() -> None:
    splitter = MarkdownSplitter()
    splitter.feed("intro\n\n```py\nx = 1\n\n\ny = 2\n``")
    assert splitter.open_kind == "code"
    assert splitter.open_code_lines == ("```py\n", "x = 1\n\n\ny = 2\n``")
    closed = splitter.feed("`\nafter")
    assert closed.text == "```py\nx = 1\n\n\ny = 2\n```\n"
    assert splitter.open_kind == "text" and splitter.open_text == "after"


def test_wrap_breaks_at_spaces_and_cuts_long_words() -> None:
    text = "alpha beta gamma " + "x" * 25
    spans = wrap_line(text, 10)
    assert [text[a:b] for a, b in spans] == ["alpha beta", "gamma", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]
    # wrapping from the start of any visual line gives the same lines after it (what appending relies on)
    assert wrap_line(text, 10, spans[1][0]) == spans[1:]
