"""The pre-flight fallback's marker at tiny windows (found by the fuzz farm at a 4k window)."""

from __future__ import annotations

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.chain.estimate import TokenEstimator
from tui.chain.fallback import fallback_compact
from tui.chain.summary_message import summary_text


def test_the_fallback_falls_back_to_a_bare_notice_when_the_condensed_marker_does_not_fit() -> None:
    estimator = TokenEstimator()
    messages = [
        ModelRequest(parts=[UserPromptPart("read src/app/main.py " + "x" * 3_000)]),
        ModelResponse(parts=[TextPart("it defines main() " + "y" * 3_000)]),
        ModelRequest(parts=[UserPromptPart("and now the latest question")]),
    ]
    room = estimator.message_tokens(messages[-1]) + 120  # the newest message and a short notice, no more

    fitted = fallback_compact(messages, target_tokens=room, estimator=estimator)

    assert fitted is not None, "the newest message fits with a bare notice, so the request must not fail"
    kept, replaced = fitted
    assert replaced == 2 and kept[1:] == messages[2:]
    notice = summary_text(kept[0]) or ""
    assert "removed to fit the context window" in notice and "Start of the removed span" not in notice
    assert estimator.message_tokens(kept[0]) + estimator.message_tokens(messages[-1]) <= room


def test_the_condensed_marker_is_kept_when_it_fits() -> None:
    estimator = TokenEstimator()
    messages = [
        ModelRequest(parts=[UserPromptPart("read src/app/main.py")]),
        ModelResponse(parts=[TextPart("it defines main()")]),
        ModelRequest(parts=[UserPromptPart("and now the latest question")]),
    ]
    fitted = fallback_compact(messages, target_tokens=10_000, estimator=estimator)
    assert fitted is not None
    assert "Start of the removed span" in (summary_text(fitted[0][0]) or "")
