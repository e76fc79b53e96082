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
