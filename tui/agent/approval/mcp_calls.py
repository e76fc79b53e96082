"""Whether a tool of an MCP server may run: ``[tools] mcp``, the server's own ``approval``, the user's answer.

The session's :class:`~tui.agent.approval.approval_gate.ApprovalGate` defers MCP calls exactly as it defers file writes
(pydantic-ai tool approval) and hands them here. The user is asked through the same approver and dialog as
for writes, with a :class:`~tui.agent.approval.writes.WriteRequest` of action ``call``: the server, the tool
and its arguments as plain text. "Allow for this session" allows every tool of that one server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic_ai import ToolDenied
from pydantic_ai.tools import ToolDefinition

from tui.agent.approval.writes import PREVIEW_CHAR_LIMIT, WriteApprover, WriteDecision, WritePolicy, WriteRequest
from tui.base.metadata_keys import MCP_SERVER_KEY

logger = logging.getLogger(__name__)

DENIED_HEADLESS = ("the user has not allowed the tools of MCP server {server} in this run, so {tool} was not run; "
                   "the user can allow them with [tools] mcp = \"always\" or [mcp.servers.{server}] approval = "
                   "\"always\" in config.toml")
DENIED_BY_POLICY = ("the tools of MCP server {server} are turned off ([tools] mcp or [mcp.servers.{server}] "
                    "approval = \"never\"), so {tool} was not run")
DENIED_BY_USER = "the user denied {tool} (MCP server {server}); it was not run"


@dataclass(frozen=True)
class McpRoute:
    """Where a tool the model sees comes from: the server and the server's own name for it."""

    server: str
    tool: str


def mcp_server_of(tool_def: ToolDefinition) -> str | None:
    """The MCP server a tool belongs to (``None`` for deep-tui's own tools)."""
    server = (tool_def.metadata or {}).get(MCP_SERVER_KEY)
    return server if isinstance(server, str) else None


@dataclass
class McpApprovals:
    """The approval policy of every MCP server, and what the user allowed for this session (in memory only)."""

    default: WritePolicy = "ask"
    """``[tools] mcp``."""
    per_server: Mapping[str, WritePolicy] = field(default_factory=dict)
    """``[mcp.servers.NAME] approval``, where set."""
    route: Callable[[str], McpRoute | None] = lambda _name: None
    """The server behind a tool name the model used (the running servers' current tools)."""
    allowed_for_session: set[str] = field(default_factory=set)

    def policy(self, server: str) -> WritePolicy:
        return self.per_server.get(server, self.default)

    def needs_approval(self, server: str) -> bool:
        return server not in self.allowed_for_session and self.policy(server) != "always"

    async def answer(self, call_id: str, tool_name: str, args: dict[str, object], approver: WriteApprover | None,
                     *, position: int = 1, total: int = 1) -> bool | ToolDenied | None:
        """The answer to one deferred call, or ``None`` when ``tool_name`` is not an MCP server's tool."""
        route = self.route(tool_name)
        if route is None:
            return None
        server = route.server
        if not self.needs_approval(server):
            return True
        if self.policy(server) == "never":
            return self._refuse(tool_name, DENIED_BY_POLICY.format(server=server, tool=tool_name))
        if approver is None:
            return self._refuse(tool_name, DENIED_HEADLESS.format(server=server, tool=tool_name))
        decision = await approver(build_call_request(call_id, tool_name, route, args, position=position, total=total))
        if decision.allow:
            if decision.for_session:
                self.allowed_for_session.add(server)
                logger.info("the tools of MCP server %s allowed for the rest of this session", server)
            return True
        return self._refuse(tool_name, denial_message(decision, tool_name, server))

    @staticmethod
    def _refuse(tool_name: str, message: str) -> ToolDenied:
        logger.info("refused MCP tool %s", tool_name)
        return ToolDenied(message)


def denial_message(decision: WriteDecision, tool_name: str, server: str) -> str:
    message = DENIED_BY_USER.format(tool=tool_name, server=server)
    return f"{message}. The user's reason: {decision.reason}" if decision.reason else message


def build_call_request(call_id: str, tool_name: str, route: McpRoute, args: Mapping[str, object], *,
                       position: int = 1, total: int = 1) -> WriteRequest:
    """What the dialog shows: the server, the tool (its own name, and the model's when prefixed), the arguments."""
    body = json.dumps(dict(args), indent=2, ensure_ascii=False, default=str)
    note = f"the model calls it {tool_name}" if tool_name != route.tool else ""
    if len(body) > PREVIEW_CHAR_LIMIT:
        shown = body[:PREVIEW_CHAR_LIMIT]
        note = "; ".join(filter(None, [note, f"{len(body) - len(shown):,} more characters of arguments not shown"]))
        body = shown
    note = "; ".join(filter(None, [note, f"allowing for this session allows every tool of {route.server}"]))
    return WriteRequest(call_id, tool_name, route.tool, "call", body, body.count("\n") + 1, note=note,
                        position=position, total=total, server=route.server)
