"""File writes through pydantic-ai's tool approval: a deferred call the user (or the policy) answers in the run.

:class:`ApprovalGate` is one capability doing both halves of pydantic-ai's human-in-the-loop approval:

- it wraps the run's toolset with ``approval_required`` so a call to a tool marked with
  :data:`~tui.agent.tools.kinds.WRITES_FILES_METADATA` raises ``ApprovalRequired`` instead of running
  (unless the policy is ``always`` or the user allowed writes for this session);
- its ``handle_deferred_tool_calls`` hook answers those calls inside the same run with
  ``DeferredToolResults``: approved calls then run, denied ones return a ``ToolDenied`` message the model
  reads (recorded as a tool return with outcome ``denied``).

Shell commands (a tool marked with :data:`~tui.agent.tools.kinds.RUNS_COMMANDS_METADATA`) go through the same
two halves, answered by the session's :class:`~tui.agent.approval.commands.CommandApprovals` (its policy, the
rules the user granted, the app's command dialog): one gate, so one ``handle_deferred_tool_calls`` answers
every deferred call of a response, whichever kind.

A subagent (:mod:`tui.agent.subagents`) gets a gate of its own from :meth:`ApprovalGate.for_subagent`: the same
policies, the same rules and "allow for this session" answers, the same dialogs — each request naming the subagent.
The dialogs are asked one at a time, whichever agent asks.

The run is never split in two, so messages.json records the call and its answer once. A turn stopped while the
user is being asked (Esc, a session switch, quitting from the dialog) leaves the call unanswered: the gate notes it
and every later call of the response as denied (:meth:`ApprovalGate.take_unanswered`), and the session seals them
so (:mod:`tui.agent.session.history_seal`): the model reads that they were not run, and why.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, RunContext, ToolDenied
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset

from tui.agent.approval.commands import CommandApprovals, CommandRequest, suggested_prefix
from tui.agent.approval.mcp_calls import McpApprovals, mcp_server_of
from tui.agent.approval.plan_mode import ModeGuard
from tui.agent.approval.writes import (
    DENIED_BY_POLICY,
    DENIED_HEADLESS,
    WriteApprover,
    WriteDecision,
    WritePolicy,
    WriteRequest,
    build_write_request,
    denial_message,
)
from tui.agent.shell.command_run import clamp_timeout
from tui.agent.tools.kinds import runs_commands, writes_files
from tui.agent.tools.path_policy import PathPolicy

logger = logging.getLogger(__name__)

DENIED_UNANSWERED = ("the user stopped the turn before answering whether {tool} may run, so it was not run; "
                     "ask again if it is still needed")
"""The return of a call the user was being asked about (or that waited behind it) when the turn stopped."""


@dataclass
class ApprovalGate(AbstractCapability[None]):
    """Asks before a file-changing tool runs, as ``policy`` says; ``approver`` is the app's dialog (``None``
    in ``deep-tui run``, where an ``ask`` is refused with a message telling how to allow writes)."""

    policy: PathPolicy
    writes: WritePolicy = "ask"
    approver: WriteApprover | None = None
    allowed_for_session: bool = False
    """Set when the user chose "allow for this session"; in memory only."""
    mcp: McpApprovals | None = None
    """The MCP servers' tools ask through this gate too, as their own policy says."""
    commands: CommandApprovals | None = None
    """The shell commands' policy and granted rules (``None``: the session has no ``execute`` tool)."""
    sandbox_line: str = ""
    """How commands run (shown in the command dialog)."""
    subagent: str = ""
    """The subagent whose calls this gate answers (its requests name it); "" for the session's own agent."""
    parent: ApprovalGate | None = None
    """The session's gate, whose policy, approver and session-wide answers a subagent's gate uses."""
    _asking: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    def for_subagent(self, label: str) -> ApprovalGate:
        """A gate for a subagent's agent: this session's policies and answers, its requests named ``label``."""
        root = self._root
        return ApprovalGate(root.policy, root.writes, mcp=root.mcp, commands=root.commands,
                            sandbox_line=root.sandbox_line, subagent=label, parent=root,
                            command_tools=root.command_tools, modes=root.modes)

    @property
    def _root(self) -> ApprovalGate:
        return self.parent if self.parent is not None else self

    def _approver(self) -> WriteApprover | None:
        """The session's approver, the requests named after this gate's subagent (and asked one at a time)."""
        root = self._root
        approver = root.approver
        if approver is None:
            return None

        async def ask(request: WriteRequest) -> WriteDecision:
            async with root._asking:
                return await approver(dataclasses.replace(request, subagent=self.subagent))

        return ask
    command_tools: frozenset[str] = frozenset()
    """The names of the tools that run commands (:class:`~tui.agent.tools.kinds.ToolKinds`): a call is known as a
    command by them when the run has no tool definitions to read the mark from."""
    unanswered: dict[str, str] = field(default_factory=dict)
    """Calls left unanswered by a stopped turn, by call id: what the model reads for each (see :meth:`take_unanswered`)."""

    def take_unanswered(self) -> dict[str, str]:
        """The calls a stopped turn left unanswered (the one being asked about and those behind it), each with the
        denial the model reads; forgotten once taken."""
        taken, self.unanswered = self.unanswered, {}
        return taken
    modes: ModeGuard | None = None
    """The session's mode: in ``accept-writes`` file writes run without asking (unless ``writes`` is ``never``);
    in ``plan`` the guard refuses every change before this gate is reached."""

    @property
    def accepting_writes(self) -> bool:
        """File writes run without asking: the policy, "allow for this session", or the accept-writes mode."""
        if self.writes == "always" or self.allowed_for_session:
            return True
        return self.writes == "ask" and self.modes is not None and self.modes.mode == "accept-writes"

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_wrapper_toolset(self, toolset: AbstractToolset[None]) -> AbstractToolset[None] | None:
        return toolset.approval_required(self._needs_approval)

    def _needs_approval(self, ctx: RunContext[None], tool_def: ToolDefinition, args: dict[str, Any]) -> bool:
        if self.mcp is not None and (server := mcp_server_of(tool_def)) is not None:
            return self.mcp.needs_approval(server)
        if runs_commands(tool_def):
            return self.commands is not None and not self.commands.allowed_without_asking(str(args.get("command", "")))
        if not writes_files(tool_def) or self._root.accepting_writes:
            return False
        try:
            self.policy.resolve_for_write(str(args.get("path", "")))
        except ToolFailed:
            return False  # the tool itself refuses this path: nothing to ask about
        return True

    async def handle_deferred_tool_calls(self, ctx: RunContext[None], *,
                                         requests: DeferredToolRequests) -> DeferredToolResults | None:
        calls = requests.approvals
        answers: dict[str, bool | ToolDenied] = {}
        try:
            await self._answer_all(ctx, calls, answers)
        except asyncio.CancelledError:
            for call in calls:
                if call.tool_call_id not in answers:
                    self.unanswered[call.tool_call_id] = DENIED_UNANSWERED.format(tool=call.tool_name)
            raise
        return requests.build_results(approvals=answers)

    async def _answer_all(self, ctx: RunContext[None], calls: list[Any], answers: dict[str, bool | ToolDenied]) -> None:
        """Ask about each deferred call in turn, filling ``answers``."""
        for position, call in enumerate(calls, start=1):
            args = call.args_as_dict()
            if self.mcp is not None and (answer := await self.mcp.answer(
                    call.tool_call_id, call.tool_name, args, self._approver(), position=position, total=len(calls))) is not None:
                answers[call.tool_call_id] = answer
                continue
            if self.commands is not None and self._is_command(ctx, call.tool_name):
                answers[call.tool_call_id] = await self._answer_command(ctx, call.tool_call_id, call.tool_name, args,
                                                                        position, len(calls))
                continue
            shown_as = str(args.get("path", ""))
            try:
                target = self.policy.resolve_for_write(shown_as)
            except ToolFailed:  # the path changed since the call was deferred: the tool refuses it itself
                answers[call.tool_call_id] = True
                continue
            request = await asyncio.to_thread(  # reads the file for the diff: off the app's event loop
                build_write_request, call.tool_call_id, call.tool_name, args, target, self.policy.display(target),
                position=position, total=len(calls))
            answers[call.tool_call_id] = await self._answer(request)

    async def _answer(self, request: WriteRequest) -> bool | ToolDenied:
        root = self._root
        if root.accepting_writes:
            return True  # "allow for this session" given for an earlier call of the same response, or the mode
        if root.writes == "never":
            return self._refuse(request, DENIED_BY_POLICY.format(tool=request.tool_name, path=request.path))
        approver = self._approver()
        if approver is None:
            return self._refuse(request, DENIED_HEADLESS.format(tool=request.tool_name, path=request.path))
        decision = await approver(request)
        if decision.allow:
            if decision.for_session:
                root.allowed_for_session = True
                logger.info("file writes allowed for the rest of this session")
            return True
        return self._refuse(request, denial_message(decision, request))

    def _is_command(self, ctx: RunContext[None], tool_name: str) -> bool:
        if ctx.tool_manager is not None and ctx.tool_manager.tools is not None:
            return runs_commands(ctx.tool_manager.get_tool_def(tool_name))
        return tool_name in self.command_tools

    async def _answer_command(self, ctx: RunContext[None], call_id: str, tool_name: str, args: dict[str, Any],
                              position: int, total: int) -> bool | ToolDenied:
        assert self.commands is not None
        command = str(args.get("command", ""))
        timeout = args.get("timeout")
        request = CommandRequest(call_id, tool_name, command, str(self.policy.workdir),
                                 clamp_timeout(timeout if isinstance(timeout, (int, float)) else None),
                                 suggested_prefix(command), sandbox=self.sandbox_line, position=position, total=total,
                                 subagent=self.subagent)
        async with self._root._asking:  # one dialog at a time, whichever agent asks
            refusal = await self.commands.answer(request)
        if refusal is None:
            return True
        logger.info("refused the command %r", command[:200])
        return ToolDenied(refusal)

    def _refuse(self, request: WriteRequest, message: str) -> ToolDenied:
        logger.info("refused %s", request.summary)
        return ToolDenied(message)
