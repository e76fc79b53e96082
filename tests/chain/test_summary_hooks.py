"""The chain's :class:`SummaryHooks` around an automatic summary: told before the summarizer runs, what they add
after it joins the summary message — capped to its share of the limit, counted in the figures (the compaction's
``tokens_after``, the usage), and the request still within the limit."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import SystemPromptPart

from tests.chain.support import SummarizerScript, history, make_harness, seed
from tui.chain.events import CompactionFinished, UsageEvent
from tui.chain.summary_hooks import ADDITION_SHARE_OF_LIMIT, SummaryMoment


class Hooks:
    def __init__(self, script: SummarizerScript, addition: str) -> None:
        self.script, self.addition = script, addition
        self.calls: list[tuple[str, SummaryMoment, int]] = []

    async def before_summary(self, moment: SummaryMoment) -> None:
        self.calls.append(("before", moment, len(self.script.prompts)))

    async def after_summary(self, moment: SummaryMoment) -> str | None:
        self.calls.append(("after", moment, len(self.script.prompts)))
        return self.addition


def _summarized(tmp_path: Path, addition: str) -> tuple[CompactionFinished, list[UsageEvent], Hooks, object]:
    script = SummarizerScript(reply="SUMMARY of the earlier turns")
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.85,
                           min_savings_tokens=10**9)
    hooks = Hooks(script, addition)
    harness.manager.summary_hooks = hooks
    harness.agent().run_sync("next", message_history=seed(harness, history(8, 4000)))
    [event] = [e for e in harness.events if isinstance(e, CompactionFinished)]
    return event, [e for e in harness.events if isinstance(e, UsageEvent)], hooks, harness


def test_the_hooks_run_around_the_summarizer_and_their_text_is_counted_and_capped(tmp_path: Path) -> None:
    plain, _, _, _ = _summarized(tmp_path / "plain", "")
    event, usage, hooks, harness = _summarized(tmp_path / "hooked", "RULES " * 20_000)
    [(first, asked_before), (second, asked_after)] = [(kind, prompts) for kind, _, prompts in hooks.calls]
    assert (first, asked_before, second) == ("before", 0, "after") and asked_after >= 1  # (a retention pass too)
    before, after = hooks.calls[0][1], hooks.calls[1][1]
    assert before.trigger == "auto" and before.summary is None and before.messages_summarized > 0
    assert after.summary == "SUMMARY of the earlier turns" and after.tokens_after == plain.tokens_after
    sent = harness.received[0]  # type: ignore[attr-defined]
    recorded = harness.recorder.messages[event.summary_index]  # type: ignore[attr-defined]
    [added] = [p.content for p in recorded.parts if isinstance(p, SystemPromptPart)]
    assert added.startswith("RULES") and "more characters left out" in added
    assert any(added in str(p.content) for p in sent[0].parts)  # sent with the summary (as the model takes it)
    limit = usage[-1].limit
    grown = event.tokens_after - plain.tokens_after  # the addition, in the figures
    assert 0.5 * ADDITION_SHARE_OF_LIMIT * limit < grown <= 1.1 * ADDITION_SHARE_OF_LIMIT * limit
    assert usage[-1].tokens <= limit and harness.manager.last_tokens <= limit  # type: ignore[attr-defined]
