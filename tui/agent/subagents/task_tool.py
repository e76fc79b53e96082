"""The ``task`` tool (pydantic-deep's name and arguments): hand a side task to a subagent and read only its answer.

``task(description, prompt, subagent_type=None)`` runs a subagent (:mod:`tui.agent.subagents.subagent_pool`) and returns its
final answer; the subagent's tool calls and their outputs stay in its own history, never in the caller's context.
Its progress reaches the caller's run as :class:`~tui.agent.subagents.progress.SubagentProgress` events.
"""

from __future__ import annotations

from pydantic_ai import FunctionToolset, RunContext

from tui.agent.subagents.progress import SubagentProgress
from tui.agent.subagents.subagent_pool import GENERAL_PURPOSE, SubagentPool
from tui.agent.subagents.subagent_run import TASK_TOOL_NAME
from tui.agent.tools.kinds import DELEGATES_METADATA

TASK_DESCRIPTION = """\
Hand a self-contained task (reading big files or logs, searching a codebase) to a subagent with a fresh context;
only its final answer comes back. It has your tools but task and cannot see this chat: put all it needs in
`prompt`. Several calls in one response run at once (up to {limit}). `description`: 3-8 words for the user.
`subagent_type`: {types}"""


def task_description(pool: SubagentPool) -> str:
    """The tool's description: when to use it, and the subagent types there are (each with its description)."""
    lines = [f"default {GENERAL_PURPOSE.name} (every tool but task)"]
    lines += [f"- {definition.name}: {' '.join(definition.description.split())}"
              for definition in pool.catalog.listing()]
    return TASK_DESCRIPTION.format(limit=pool.limit, types="\n".join(lines))


def task_toolset(pool: SubagentPool) -> FunctionToolset[None]:
    """The toolset holding ``task``, running its subagents in ``pool``."""
    toolset: FunctionToolset[None] = FunctionToolset()

    async def task(ctx: RunContext[None], description: str, prompt: str, subagent_type: str | None = None) -> str:
        async def emit(progress: SubagentProgress) -> None:
            await ctx.emit(progress)

        return await pool.run(tool_call_id=ctx.tool_call_id or "", description=description, prompt=prompt,
                              subagent_type=subagent_type, emit=emit)

    toolset.add_function(task, takes_ctx=True, name=TASK_TOOL_NAME, description=task_description(pool),
                         metadata=dict(DELEGATES_METADATA))
    return toolset
