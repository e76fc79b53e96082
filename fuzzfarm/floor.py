"""The floor pydantic-ai itself sets under the farm: the same sessions through a bare ``Agent``.

Each seed's generated session is played by the same :class:`ScriptedChatModel` (the same scripted tool
calls and answers, the same per-request meter), with the same file tools on a ``LocalWorkspace`` over a
workdir made from the shared template, streamed like the runtime streams (``run_events``,
``workspace="new"``), blocking calls inline like the farm. Nothing of deep-tui's chain runs: no
ContextManager or eviction capabilities, no SessionStore, no write gate (writes run), no checks.
``resume``, ``fork`` and ``compact`` actions and ``task`` calls (subagents) have no bare equivalent and are skipped; each turn's
history is the previous run's ``all_messages()``, never compacted, so every request carries at least as
many messages as the farm's does: the floor is an upper bound on what pydantic-ai (with the same tools
and scripted model) costs without the chain, and the farm ÷ floor ratio a lower bound on what deep-tui's
chain and store and the farm's checks add.

A seed whose bare run raises is counted as skipped (and reported as such), never fatal.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import override_allow_model_requests
from pydantic_ai.run import AgentRunResult

from fuzzfarm.farm import SCRATCH, _shared_template, _worker_started
from fuzzfarm.generator import generate
from fuzzfarm.inline import inline_sync_calls
from fuzzfarm.scripted_model import ChatScript, ScriptedChatModel
from fuzzfarm.spec import SessionSpec
from fuzzfarm.workspace import make_workdir
from tui.agent.session.run_events import run_events
from tui.agent.session.runtime import BASE_INSTRUCTIONS
from tui.agent.shell.execute_tool import ShellState, shell_toolset
from tui.agent.shell.sandbox import sandbox_for
from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.todo_tools import todo_toolset
from tui.agent.tools.file_tools import file_toolset
from tui.agent.tools.path_policy import PathPolicy
from tui.store.task_state import TaskStateFile

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FloorSession:
    """One seed played bare: its CPU seconds and requests, or why it was skipped."""

    seed: int
    cpu_seconds: float = 0.0
    requests: int = 0
    skipped: str | None = None


@dataclass
class FloorFigures:
    """The floor over a sample of seeds (skipped seeds are left out of every per-session figure)."""

    sessions: list[FloorSession] = field(default_factory=list)

    @property
    def measured(self) -> list[FloorSession]:
        return [s for s in self.sessions if s.skipped is None]

    @property
    def skipped(self) -> list[FloorSession]:
        return [s for s in self.sessions if s.skipped is not None]

    @property
    def seeds(self) -> set[int]:
        """The seeds the floor was measured on (the farm's own figure compares on these)."""
        return {s.seed for s in self.measured}

    @property
    def cpu_per_session(self) -> float:
        measured = self.measured
        return sum(s.cpu_seconds for s in measured) / max(1, len(measured))

    @property
    def requests_per_session(self) -> float:
        measured = self.measured
        return sum(s.requests for s in measured) / max(1, len(measured))

    @property
    def ms_per_request(self) -> float:
        requests = sum(s.requests for s in self.measured)
        return 1000 * sum(s.cpu_seconds for s in self.measured) / max(1, requests)

    def projected_seconds(self, sessions: int, workers: int) -> float:
        """CPU seconds of the floor alone for ``sessions`` sessions spread over ``workers`` idle cores."""
        return self.cpu_per_session * sessions / max(1, workers)


async def play(spec: SessionSpec, workdir: Path, data_root: Path) -> ChatScript:
    """``spec``'s turns on a bare agent working in ``workdir``; the script holds every request it was sent. The bare
    agent has no ``task`` tool: the turns are played without their subagent traffic."""
    spec = spec.without_subagents()
    script = ChatScript(spec.disagreement, spec.model_counts)
    agent: Agent[None, str] = Agent(ScriptedChatModel(script), instructions=BASE_INSTRUCTIONS,
                                    toolsets=[file_toolset(PathPolicy(workdir=workdir, data_root=data_root)),
                                              shell_toolset(ShellState(sandbox_for(workdir, [data_root], network=False,
                                                                                   enabled=True))),
                                              todo_toolset(TaskBoard(TaskStateFile.of(data_root / "floor-todos"),
                                                                     notify=lambda _event: None))],
                                    capabilities=[LocalWorkspace(workdir)])
    history: list[ModelMessage] = []
    for turn, action in enumerate(a for a in spec.actions if a.kind == "turn"):
        script.begin_turn(turn, action)
        async for item in run_events(agent, action.prompt, message_history=history, workspace="new"):
            if isinstance(item, AgentRunResult):
                history = item.all_messages()
        script.turn = -1
    return script


def floor_session(seed: int) -> FloorSession:
    """Play ``seed``'s session on a bare agent in a fresh temporary directory; a raise is a skip."""
    spec, template = generate(seed), _shared_template()  # outside the measure, as in the farm's run_seed
    cpu = time.process_time()
    with tempfile.TemporaryDirectory(prefix="fuzzfloor-", dir=SCRATCH) as tmp:
        workdir = make_workdir(template, Path(tmp) / "work")
        try:
            # scripted model only: nothing leaves the process; blocking calls inline (see fuzzfarm.inline)
            with override_allow_model_requests(True), inline_sync_calls():
                requests = len(asyncio.run(play(spec, workdir, Path(tmp) / "data")).requests)
        except Exception as error:  # a seed the bare agent cannot play is counted as skipped, with why
            logger.warning("floor: seed %d skipped: %s: %s", seed, type(error).__name__, error)
            return FloorSession(seed, skipped=f"{type(error).__name__}: {str(error)[:200]}")
    return FloorSession(seed, time.process_time() - cpu, requests)


def measure_floor(seeds: Sequence[int], workers: int) -> FloorFigures:
    """The floor over ``seeds``, on ``workers`` processes (1: in this process), like the farm runs them."""
    if workers <= 1:
        return FloorFigures(sorted(map(floor_session, seeds), key=lambda s: s.seed))
    _shared_template()  # built once here: forked workers inherit it, and this process removes it at exit
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_worker_started, maxtasksperchild=500) as pool:
        sessions = list(pool.imap_unordered(floor_session, seeds, chunksize=4))
    return FloorFigures(sorted(sessions, key=lambda s: s.seed))
