"""``deep-tui run`` and the app say the same number of tokens for the same event."""

from __future__ import annotations

import json

from tui.app import formatting as app_formatting
from tui.chain.event_text import describe_event
from tui.chain.events import CompactionFinished, CompactionStarted
from tui.text.token_text import human_tokens


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


def test_an_eviction_is_named_by_what_was_read_then_the_saved_file() -> None:
    """Issue 22.11: ``deep-tui run`` names the source (tool and its path/pattern), the saved file second."""
    from tui.chain.events import EvictedEvent
    from tui.text.tool_call_text import call_source, path_argument

    event = EvictedEvent(tool_name="read_file", tool_call_id="call_1795", path="/d/call_1795-abc.txt", tokens=7_600,
                         size_bytes=30_720, args='{"path": "src/app.py", "offset": 0}')
    assert describe_event(event) == ("evicted the output of read_file src/app.py (7.6k tokens), "
                                     "saved as /d/call_1795-abc.txt")
    assert call_source("grep", '{"pattern": "TODO", "path": "src"}') == "grep 'TODO' in src"
    assert call_source("glob", '{"pattern": "**/*.py"}') == "glob '**/*.py'"
    assert call_source("ls", "{}") == "ls" and call_source("ls", "not json") == "ls"
    assert path_argument('{"path": "a.py"}') == "a.py" and path_argument('{"path": 3}') is None
    long_command = json.dumps({"command": "python -m pytest " + " ".join(f"tests/test_module_{n}.py" for n in range(9))})
    shown = call_source("execute", long_command)
    assert shown.endswith(".py…'") and len(shown) <= len("execute ''") + 120, "cut after a whole word, marked"
