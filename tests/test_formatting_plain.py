"""``deep-tui run`` and the app say the same number of tokens for the same event."""

from __future__ import annotations

from tui.app import formatting as app_formatting
from tui.chain.events import CompactionFinished, CompactionStarted
from tui.formatting_plain import describe_event, human_tokens


def test_run_prints_the_count_the_app_shows() -> None:
    assert app_formatting.human_tokens is human_tokens  # one formatter, re-exported for the widgets
    assert describe_event(CompactionStarted(timestamp=0, trigger="auto", tokens=96_300)) == (
        "compaction started (auto) at 96.3k tokens")
    finished = CompactionFinished(timestamp=0, strategy="summary", trigger="manual", tokens_before=96_300,
                                  tokens_after=18_040, messages_replaced=142)
    assert "96.3k → 18k tokens" in describe_event(finished)


def test_token_counts() -> None:
    assert [human_tokens(n) for n in (None, 950, 96_300, 200_000, 999_949, 1_250_000, -1_500)] == [
        "–", "950", "96.3k", "200k", "999.9k", "1.25M", "-1.5k"]
