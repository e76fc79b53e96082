"""``pre_compact`` and ``post_compact`` hooks, as the chain's :class:`~tui.chain.summary_hooks.SummaryHooks`: told
before a summary is written and after it replaced its span. What a ``post_compact`` hook prints (exit status 0) is
appended to the new context — the user's rules, restated after the summary — sanitized here, capped by the chain
against the request limit (so it counts in the gauge and the pre-flight)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui.agent.hooks.hook_runner import HookRunner
from tui.chain.summary_hooks import SummaryMoment, capped_addition
from tui.text.terminal_text import visible

HEADING = "Restated after the summary by the user's post_compact hooks:\n"
MAX_EVENT_SUMMARY_CHARS = 8_000
"""A post_compact event carries at most this much of the summary's text."""


@dataclass
class CompactionHooks:
    """The session's ``[[hooks.pre_compact]]`` and ``[[hooks.post_compact]]``, run by ``runner``, for the session's
    own context or (``agent_name``) a subagent's, told to the hook as ``"subagent"``."""

    runner: HookRunner
    agent_name: str | None = None

    def _fields(self, moment: SummaryMoment) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "trigger": moment.trigger, "focus": moment.focus, "tokens": moment.tokens_before, "limit": moment.limit,
            "window": moment.window, "messages_to_summarize": moment.messages_summarized,
            "messages_kept": moment.messages_kept}
        if self.agent_name is not None:
            fields["subagent"] = self.agent_name
        return fields

    async def before_summary(self, moment: SummaryMoment) -> None:
        specs = self.runner.matching("pre_compact", moment.trigger)
        if specs:
            await self.runner.run("pre_compact", specs, self._fields(moment))

    async def after_summary(self, moment: SummaryMoment) -> str | None:
        specs = self.runner.matching("post_compact", moment.trigger)
        if not specs:
            return None
        summary = moment.summary or ""
        fields = {**self._fields(moment), "tokens_after": moment.tokens_after,
                  "summary": summary[:MAX_EVENT_SUMMARY_CHARS], "summary_chars": len(summary)}
        texts = []
        for result in await self.runner.run("post_compact", specs, fields):
            text = visible(result.stdout).strip()
            if result.status == 0 and text:
                texts.append(text)
        if not texts:
            return None
        joined = HEADING + "\n\n".join(texts)
        added = capped_addition(joined, moment.room_chars)
        cut = f" (cut from {len(joined):,}: at most {moment.room_chars:,} here)" if added != joined else ""
        self.runner.tell("post_compact", f"{len(added):,} characters added to the context after the summary{cut}",
                         level="information")
        return added
