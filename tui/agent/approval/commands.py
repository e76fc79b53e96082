"""Who decides whether the agent may run a shell command: the policy, the request, the answer, the session's rules.

Like :mod:`tui.agent.approval.writes` (no pydantic-ai or Textual import): the app's dialog and ``deep-tui run``
share these types, and :class:`~tui.agent.approval.approval_gate.ApprovalGate` turns them into pydantic-ai's tool approval.

A *prefix rule* ("allow every ``pytest …`` for this session") matches only a *simple* command: words
without any shell syntax that could chain, substitute or redirect (``;``, ``&``, ``|``, ``$``, backquote,
``<``, ``>``, parentheses, braces, a newline, a backslash). ``pytest; rm -rf ~`` or ``pytest $(curl …)``
is never covered by the ``pytest`` rule: it is asked about like any other. The command string is the
model's and hostile: whoever shows it passes it through :func:`tui.text.terminal_text.visible`.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

logger = logging.getLogger(__name__)

CommandPolicy = Literal["ask", "always", "never"]
"""``ask``: each command waits for the user (``run`` refuses it); ``always``: commands run without asking;
``never``: every command is refused."""

SHELL_SYNTAX = frozenset(";&|$`<>(){}\n\r\\")
"""Characters that make a command compound (or substituted, or redirected): no prefix rule covers it."""

WRAPPERS = frozenset({"sh", "bash", "zsh", "dash", "fish", "env", "xargs", "sudo", "doas", "su", "eval", "exec",
                      "nohup", "timeout", "nice", "ionice", "time", "command", "builtin", "python", "python3",
                      "node", "perl", "ruby", "uv", "uvx", "npx", "pnpm", "npm", "yarn", "git", "cargo", "go",
                      "make", "docker", "kubectl", "poetry", "pip", "pip3", "deno", "bun", "dotnet", "java"})
"""First words that say little alone (an interpreter, a wrapper, a tool with subcommands): their prefix rule
takes the next word too (``python -m`` → ``python -m pytest``, ``git status``, ``npm run``)."""

SUBCOMMAND_WORDS = frozenset({"-m", "-c", "run", "exec", "x"})
MAX_PREFIX_WORDS = 3

DENIED_HEADLESS = ("the user has not allowed shell commands in this run, so `{command}` was not run; the user can "
                   "rerun with --allow-commands (or set [tools] commands = \"always\" in their config.toml) to let "
                   "the agent run commands")
DENIED_BY_POLICY = ("shell commands are turned off ([tools] commands = \"never\" or --deny-commands), so `{command}` "
                    "was not run; tell the user what you would run instead")
DENIED_BY_USER = "the user denied running `{command}`; it was not run"

Scope = Literal["once", "prefix", "session"]


def simple_words(command: str) -> list[str] | None:
    """The words of ``command`` when it is one simple command (no shell syntax, no ``VAR=`` prefix), else ``None``."""
    if not command.strip() or any(char in SHELL_SYNTAX for char in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or "=" in words[0]:
        return None
    return words


def suggested_prefix(command: str) -> str | None:
    """The prefix the dialog offers to allow for the session (``pytest``, ``git status``, ``python -m pytest``),
    or ``None`` when ``command`` is not simple."""
    words = simple_words(command)
    if words is None:
        return None
    take = 1
    while take < min(len(words), MAX_PREFIX_WORDS) and (
            words[take - 1].rsplit("/", 1)[-1] in WRAPPERS or words[take - 1] in SUBCOMMAND_WORDS):
        take += 1
    return shlex.join(words[:take])


def matches_prefix(command: str, prefix: str) -> bool:
    """Whether the simple ``command`` starts with the words of ``prefix`` (never a compound command)."""
    words = simple_words(command)
    rule = shlex.split(prefix)
    return words is not None and bool(rule) and words[:len(rule)] == rule


@dataclass(frozen=True)
class CommandRequest:
    """One ``execute`` call waiting for the user's answer."""

    call_id: str
    tool_name: str
    command: str
    workdir: str
    timeout: float
    prefix: str | None
    """What "allow this prefix for the session" would allow (``None``: the command is not simple)."""
    sandbox: str = ""
    """How it will run (one line: sandboxed, network or not)."""
    position: int = 1
    total: int = 1
    subagent: str = ""
    """The subagent making the call (``subagent 2 (explore): find the loader``); "" for the session's agent."""


@dataclass(frozen=True)
class CommandDecision:
    """The user's answer to one :class:`CommandRequest`."""

    allow: bool
    scope: Scope = "once"
    """``prefix``: every later simple command starting with the request's prefix; ``session``: every command."""
    reason: str = ""

    @classmethod
    def once(cls) -> CommandDecision:
        return cls(allow=True)

    @classmethod
    def prefix(cls) -> CommandDecision:
        return cls(allow=True, scope="prefix")

    @classmethod
    def session(cls) -> CommandDecision:
        return cls(allow=True, scope="session")

    @classmethod
    def deny(cls, reason: str = "") -> CommandDecision:
        return cls(allow=False, reason=reason.strip())


CommandApprover = Callable[[CommandRequest], Awaitable[CommandDecision]]
"""Asks the user about one request (the app's dialog); cancelling it cancels the turn."""


def _short(command: str, limit: int = 200) -> str:
    one_line = " ".join(command.split())
    return one_line if len(one_line) <= limit else one_line[:limit - 1] + "…"


@dataclass
class CommandApprovals:
    """The session's command policy and the rules the user granted (in memory only, never across sessions)."""

    policy: CommandPolicy = "ask"
    approver: CommandApprover | None = None
    """The app's dialog; ``None`` in ``deep-tui run`` (an ``ask`` is then refused, telling how to allow)."""
    allow_all: bool = False
    prefixes: list[str] = field(default_factory=list)
    refused: int = 0
    """Commands refused because nobody could be asked (``run`` with ``ask``)."""
    unavailable: Callable[[], str | None] | None = None
    """Why no command can run at all (no sandbox): then nobody is asked, the tool itself refuses and says why."""

    def allowed_without_asking(self, command: str) -> bool:
        if self.policy == "always" or self.allow_all:
            return True
        if self.policy == "ask" and self.unavailable is not None and self.unavailable():
            return True  # nothing to ask about: the tool refuses, telling the model (and so the user) why
        return self.policy == "ask" and any(matches_prefix(command, prefix) for prefix in self.prefixes)

    async def answer(self, request: CommandRequest) -> str | None:
        """``None`` when the command may run, else the message the model reads."""
        command = _short(request.command)
        if self.allowed_without_asking(request.command):
            return None  # a rule granted for an earlier call of the same response
        if self.policy == "never":
            return DENIED_BY_POLICY.format(command=command)
        if self.approver is None:
            self.refused += 1
            return DENIED_HEADLESS.format(command=command)
        decision = await self.approver(request)
        if not decision.allow:
            message = DENIED_BY_USER.format(command=command)
            return f"{message}. The user's reason: {decision.reason}" if decision.reason else message
        if decision.scope == "session":
            self.allow_all = True
            logger.info("shell commands allowed for the rest of this session")
        elif decision.scope == "prefix" and request.prefix:
            self.prefixes.append(request.prefix)
            logger.info("commands starting with %r allowed for the rest of this session", request.prefix)
        return None
