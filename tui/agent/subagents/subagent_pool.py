"""The session's subagents: the ``task`` tool's engine. Several ``task`` calls of one response run at once (at
most :data:`MAX_CONCURRENT`; the rest wait for a slot), each can be cancelled on its own (the parent's model then
reads that the user cancelled it), and every one is kept for ``/context`` and the event log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pydantic_ai.models import Model

from tui.agent.subagents.progress import SubagentProgress, SubagentStatus
from tui.agent.subagents.subagent_definitions import SubagentCatalog, SubagentDefinition
from tui.agent.subagents.subagent_run import Emit, SubagentEnvironment, SubagentOutcome, SubagentRun
from tui.agent.tools.failures import refuse
from tui.chain.events import SubagentRan
from tui.store.subagent_histories import SubagentHistories
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

MAX_CONCURRENT = 4
"""Subagents running at once; more ``task`` calls in one response wait for a slot."""
GENERAL_PURPOSE = SubagentDefinition(
    name="general-purpose",
    description="A general-purpose agent with every tool but task: searching, reading and summarizing large files "
                "or many files, multi-step investigations whose details the main conversation does not need.",
    prompt="")
MAX_DESCRIPTION_CHARS = 200
MAX_PROMPT_CHARS = 200_000


class SubagentPool:
    """Runs the session's subagents (see :mod:`tui.agent.subagents.subagent_run`)."""

    def __init__(self, env: SubagentEnvironment, histories: SubagentHistories, catalog: SubagentCatalog, *,
                 build_model: Callable[[str], Model], read_only: Callable[[], bool],
                 limit: int = MAX_CONCURRENT) -> None:
        """``build_model(name)``: a definition's own model (called in a thread)."""
        self.env = env
        self.histories = histories
        self.catalog = catalog
        self._build_model = build_model
        self._read_only = read_only
        self._slots = asyncio.Semaphore(limit)
        self.limit = limit
        self.statuses: list[SubagentStatus] = []
        """Every subagent of this session since it opened, in the order they started."""
        self._runs: dict[int, SubagentRun] = {}
        self._tasks: dict[int, asyncio.Task[SubagentOutcome]] = {}

    def definition(self, subagent_type: str | None) -> SubagentDefinition:
        """The definition ``subagent_type`` names (the general-purpose one when none); a refusal the model reads,
        listing the known names, when there is no such subagent."""
        if subagent_type is None or not subagent_type.strip() or subagent_type.strip() == GENERAL_PURPOSE.name:
            return GENERAL_PURPOSE
        found = self.catalog.get(subagent_type)
        if found is None:
            known = ", ".join([GENERAL_PURPOSE.name, *sorted(self.catalog.definitions)])
            raise refuse(f"there is no subagent type {visible(subagent_type[:80])!r}; the types are: {known}")
        return found

    def running(self) -> list[SubagentStatus]:
        return [status for status in self.statuses if status.running]

    def cancel(self, number: int) -> bool:
        """Stop subagent ``number`` (its ``task`` call returns that the user cancelled it); False when it is not
        running."""
        run, task = self._runs.get(number), self._tasks.get(number)
        if run is None or task is None or task.done():
            return False
        run.cancel()
        task.cancel()
        return True

    async def run(self, *, tool_call_id: str, description: str, prompt: str, subagent_type: str | None,
                  emit: Emit) -> str:
        """Run one subagent to its answer (the ``task`` tool's result). Refusals and failures are raised as tool
        failures the parent's model reads; a cancellation of the parent's turn is recorded and raised on."""
        if self._read_only():
            raise refuse("this session is open read-only: no subagent can run")
        description = " ".join(description.split())[:MAX_DESCRIPTION_CHARS] or "(no description)"
        if not prompt.strip():
            raise refuse("the prompt is empty: give the subagent its whole task")
        if len(prompt) > MAX_PROMPT_CHARS:
            raise refuse(f"the prompt is {len(prompt):,} characters; at most {MAX_PROMPT_CHARS:,}: point the "
                         "subagent to files instead of pasting them")
        definition = self.definition(subagent_type)
        model = await self._model(definition)
        async with self._slots:
            try:
                history = await asyncio.to_thread(self.histories.create)
            except OSError as error:
                raise refuse(f"the subagent's history cannot be created: {error.strerror or error}") from None
            status = SubagentStatus(number=history.number, name=definition.name, description=visible(description),
                                    tool_call_id=tool_call_id, history=str(history.messages.path))
            self.statuses.append(status)
            run = SubagentRun(self.env, definition, model, history, status, emit)
            task = asyncio.get_running_loop().create_task(run.run(prompt))
            self._runs[status.number], self._tasks[status.number] = run, task
            try:
                outcome = await task  # a cancellation of the parent's turn reaches the subagent's task too
            finally:
                self._runs.pop(status.number, None)
                self._tasks.pop(status.number, None)
                self._record(status, run)
        return _tool_result(status, outcome)

    async def _model(self, definition: SubagentDefinition) -> Model:
        if definition.model is None:
            return self.env.chat_model()
        name = definition.model
        try:
            return await asyncio.to_thread(self._build_model, name)
        except Exception as error:  # a bad name or a missing key: the model reads why and can pick another type
            raise refuse(f"subagent {definition.name!r} names the model {visible(name[:80])!r}, which cannot be "
                         f"used: {visible(str(error))[:300]}") from None

    def _record(self, status: SubagentStatus, run: SubagentRun) -> None:
        """The subagent's line in the parent's events (events.jsonl, the event log, ``deep-tui run``)."""
        for message in run.recorded_responses():
            usage = message.usage
            status.input_tokens += usage.input_tokens
            status.output_tokens += usage.output_tokens
        outcome = status.state if status.state in ("finished", "failed", "cancelled") else "failed"
        try:
            self.env.record_event(SubagentRan(
                number=status.number, name=status.name, description=status.description,
                outcome=outcome,
                tokens=status.tokens, peak_tokens=status.peak_tokens, window=status.window, requests=status.requests,
                input_tokens=status.input_tokens, output_tokens=status.output_tokens, cost_usd=status.cost_usd,
                compactions=status.compactions, answer_chars=status.answer_chars, reason=status.reason,
                history=status.history, tool_call_id=status.tool_call_id))
        except Exception:  # the record is a log: never worth the parent's turn
            logger.warning("could not record subagent %d's event", status.number, exc_info=True)


def _tool_result(status: SubagentStatus, outcome: SubagentOutcome) -> str:
    """What the parent's model reads: the answer, or why there is none (a failure raises, so the call is an
    error the model sees as one)."""
    if outcome.state == "finished":
        return outcome.answer if outcome.answer.strip() else "(the subagent finished without an answer)"
    if outcome.state == "cancelled":
        return (f"The user cancelled subagent {status.number} ({status.description}) before it finished; it gave no "
                "answer. Do not start it again unless the user asks for it.")
    raise refuse(f"subagent {status.number} ({status.description}) failed: {outcome.reason}")


__all__ = ["GENERAL_PURPOSE", "MAX_CONCURRENT", "SubagentPool", "SubagentProgress"]
