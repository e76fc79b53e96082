"""One pluralizing helper for every counted noun the user reads."""

from __future__ import annotations

from tui.chain.event_text import describe_event
from tui.chain.events import CompactionFinished
from tui.text.wording import plural


def test_plural() -> None:
    assert plural(1, "message") == "1 message"
    assert plural(0, "message") == "0 messages"
    assert plural(1_200, "compaction") == "1,200 compactions"
    assert plural(2, "summary", "summaries") == "2 summaries"


def test_one_compaction_reads_in_the_singular() -> None:
    event = CompactionFinished(strategy="summary", trigger="manual", tokens_before=9_000, tokens_after=3_000,
                               messages_replaced=1, files_created=("a.md",))
    assert describe_event(event).startswith("summarized 1 message, ") and "1 file saved" in describe_event(event)


def test_clip_words_cuts_after_a_whole_word_and_says_so() -> None:
    from tui.text.wording import clip_words

    assert clip_words("short", 10) == "short"
    assert clip_words("git commit -m 'fix the tokenizer for long lines'", 30) == "git commit -m 'fix the…"
    assert len(clip_words("git commit -m 'fix the tokenizer for long lines'", 30)) <= 30
    assert clip_words("x" * 50, 10) == "x" * 9 + "…", "one long word: cut inside it, still marked"
    assert clip_words("a, b, c, d, e", 8) == "a, b, c…"
