"""Runs one :class:`SessionSpec` through the real runtime (``SessionRuntime`` with its chain, a real
``SessionStore`` on disk) and collects what the checks need: every request's size, events per turn,
failures, raw tool outputs, and where everything was stored."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ToolCallPart
from pydantic_ai.models import override_allow_model_requests
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from fuzzfarm.inline import inline_sync_calls
from fuzzfarm.scripted_model import ChatScript, ScriptedChatModel
from fuzzfarm.spec import Action, SessionSpec
from fuzzfarm.summarizers import summarizer_model, summarizer_timeout
from fuzzfarm.workspace import make_workdir
from tui.agent.models.choice import ModelChoice
from tui.agent.session.runtime import SessionRuntime
from tui.agent.turn_events import TurnFailed
from tui.base.config import ContextSettings, Settings, ToolSettings
from tui.base.paths import DataDir
from tui.chain.budget import WindowBudget
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished
from tui.store import SessionHandle, SessionStore
from tui.store.meta import ParentRef
from tui.store.search.searcher import HistorySearch

MODEL_NAME = "fuzz:scripted-chat"
MUTATING_TOOLS = frozenset({"write_file", "edit_file", "execute"})
"""The generated calls plan mode must refuse before they run."""


@dataclass
class ActionLog:
    """What happened during one action."""

    index: int
    kind: str
    turn: int
    events: list[ChainEvent] = field(default_factory=list)
    failure: str | None = None
    compact_result: CompactionFinished | CompactionFailed | None = None


@dataclass
class Trace:
    """Everything observed while a session ran (the files stay under ``data_dir`` until checked)."""

    spec: SessionSpec
    data_dir: DataDir
    limit: int
    """window − answer reserve: no request may be larger."""
    compaction_limit: int
    """The chain's own limit (window − reserve − margin), for the overage figures."""
    script: ChatScript
    sessions: list[str] = field(default_factory=list)
    """Session ids in the order they were worked in (a fork adds one)."""
    produced_at_switch: dict[str, int] = field(default_factory=dict)
    """How many model responses existed when work left each session."""
    prompts: list[str] = field(default_factory=list)
    raw_outputs: dict[str, Any] = field(default_factory=dict)
    """Each tool call's result as the tool returned it (before eviction)."""
    actions: list[ActionLog] = field(default_factory=list)
    plan_mode_calls: dict[str, str] = field(default_factory=dict)
    """Calls of tools that change something, made while the session was in plan mode: call id → tool."""


class UnindexedSearch(HistorySearch):
    """The app's history search with live indexing left out: :meth:`record` answers "left for a later
    sync", what the app's index does whenever another deep-tui holds it. The index is derived from
    messages.json (the app rebuilds it from there), no check of the farm reads it, and keeping it current
    after every append cost about a tenth of the farm's time (SQLite FTS5 trigram inserts and commits)."""

    def record(self, session_id: str, first: int, messages: Sequence[ModelMessage], *, title: str,
               parent: ParentRef | None) -> bool:
        return False

    def record_soon(self, session_id: str, first: int, messages: Sequence[ModelMessage], *, title: str,
                    parent: ParentRef | None) -> Future[bool]:
        """The runtime records through the writer thread: left for a later sync here too."""
        done: Future[bool] = Future()
        done.set_result(False)
        return done


@dataclass
class _RecordingToolset(WrapperToolset[None]):
    """Keeps each tool's own result (what eviction must save byte-exact)."""

    sink: dict[str, Any] = field(default_factory=dict)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[None],
                        tool: ToolsetTool[None]) -> Any:
        result = await super().call_tool(name, tool_args, ctx, tool)
        if ctx.tool_call_id is not None:
            self.sink[ctx.tool_call_id] = result
        return result


class _Session:
    def __init__(self, spec: SessionSpec, root: Path, template: Path) -> None:
        self.data_dir = DataDir(root / "data")
        self.workdir = make_workdir(template, root / "work")
        # writes="always": the user who allowed file writes (``deep-tui run --allow-writes``, "allow for this
        # session" in the app), so the generated writes and edits really change files (with "ask" and nobody to
        # ask, every one was refused and each edit then missed its file); commands="always" likewise
        # (``--allow-commands``): generated ``execute`` calls run in the sandbox (refused where there is none)
        self.settings = Settings(context=ContextSettings(window=spec.window,
                                                         summarizer_timeout=summarizer_timeout(spec.fault)),
                                 tools=ToolSettings(writes="always", commands="always"))
        self.store = SessionStore(self.data_dir)
        self.search = UnindexedSearch(self.data_dir)
        self.script = ChatScript(spec.disagreement, spec.model_counts)
        self.chat_model = ScriptedChatModel(self.script)
        self.spec = spec
        budget = WindowBudget.for_window(spec.window, self.settings.context)
        self.trace = Trace(spec=spec, data_dir=self.data_dir, limit=spec.window - budget.reserve,
                           compaction_limit=budget.limit, script=self.script)
        self.runtime: SessionRuntime | None = None
        self.log: ActionLog | None = None
        self._recording: tuple[SessionRuntime, list[AbstractToolset[None]]] | None = None

    def open(self, handle: SessionHandle) -> SessionRuntime:
        runtime = SessionRuntime(settings=self.settings, data_dir=self.data_dir, workdir=self.workdir, handle=handle,
                                 chat_model=self.chat_model, choice=ModelChoice(MODEL_NAME, "flag"),
                                 summarizer_model=summarizer_model(self.spec.fault, self.spec.seed),
                                 search=self.search)
        runtime.subscribe(self._on_event)
        self.trace.sessions.append(handle.id)
        return runtime

    def _on_event(self, event: ChainEvent) -> None:
        if self.log is not None:
            self.log.events.append(event)

    def _toolsets(self, runtime: SessionRuntime) -> list[AbstractToolset[None]]:
        """The runtime's own toolsets (the very objects its agent runs), each wrapped to keep every raw
        result; once per runtime."""
        if self._recording is not None and self._recording[0] is runtime:
            return self._recording[1]
        toolsets: list[AbstractToolset[None]] = [_RecordingToolset(toolset, sink=self.trace.raw_outputs)
                                                 for toolset in runtime.agent.toolsets]
        self._recording = (runtime, toolsets)
        return toolsets

    async def leave(self) -> None:
        assert self.runtime is not None
        self.trace.produced_at_switch[self.runtime.handle.id] = len(self.script.produced)
        await self.runtime.aclose()

    async def run(self) -> None:
        """Every action of the spec; what was seen is in :attr:`trace` (not returned: asyncio's runner formats
        the main task's result, which for a whole trace costs more than some sessions)."""
        self.runtime = self.open(self.store.create(model=MODEL_NAME))
        turn = 0
        for index, action in enumerate(self.spec.actions):
            self.log = ActionLog(index, action.kind, turn if action.kind == "turn" else -1)
            self.trace.actions.append(self.log)
            await self._act(action, turn)
            turn += action.kind == "turn"
        await self.leave()
        self.log = None
        self.search.index.close()

    async def _act(self, action: Action, turn: int) -> None:
        assert self.runtime is not None and self.log is not None
        if action.kind == "turn":
            self.script.begin_turn(turn, action)
            self.trace.prompts.append(action.prompt)
            produced = len(self.script.produced)
            with self.runtime.agent.override(toolsets=self._toolsets(self.runtime)):
                async for event in self.runtime.run_turn(action.prompt):
                    if isinstance(event, TurnFailed):
                        self.log.failure = event.message
            self.script.turn = -1
            if self.runtime.mode == "plan":
                self.trace.plan_mode_calls.update(
                    (part.tool_call_id, part.tool_name) for response in self.script.produced[produced:]
                    for part in response.parts if isinstance(part, ToolCallPart) and part.tool_name in MUTATING_TOOLS)
        elif action.kind == "keep":
            self.runtime.add_keep(action.text)
            if action.text not in self.script.keep_lines:
                self.script.keep_lines.append(action.text)
        elif action.kind == "mode":
            self.runtime.set_mode(action.text)
        elif action.kind == "resume":
            session_id = self.runtime.handle.id
            await self.leave()
            self.runtime = self.open(self.store.open(session_id))
        elif action.kind == "fork":
            session_id = self.runtime.handle.id
            await self.leave()
            self.runtime = self.open(self.store.fork(session_id, model=MODEL_NAME))
        elif action.kind == "compact":
            self.log.compact_result = await self.runtime.compact(action.focus or None)


def drive(spec: SessionSpec, root: Path, template: Path) -> Trace:
    """Run ``spec`` in ``root`` (an empty directory) and return what was observed."""
    chain_log = logging.getLogger("tui")
    level = chain_log.level
    chain_log.setLevel(logging.ERROR)  # the farm reports; the chain's warnings about faults are expected
    try:
        # scripted models only: nothing leaves the process; blocking calls inline (see fuzzfarm.inline)
        with override_allow_model_requests(True), inline_sync_calls():
            session = _Session(spec, root, template)
            asyncio.run(session.run())
            return session.trace
    finally:
        chain_log.setLevel(level)
