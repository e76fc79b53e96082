"""A live session: store + agent + context chain, driven by the app or ``deep-tui run``.

:class:`RuntimeFactory` resolves which session to open (new, resume, continue,
fork) and builds a :class:`SessionRuntime` around it. Nothing here imports
Textual; the app talks to a session only through ``runtime_api``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic_ai.models import Model

from tui.agent.extensions import Extensions
from tui.agent.mcp.servers import McpServers, mcp_servers_for
from tui.agent.models.choice import ModelChoice, build_model, choose_model
from tui.agent.models.provider_http import ProviderConnection
from tui.agent.session.request import SessionRequest
from tui.agent.session.runtime import SessionRuntime
from tui.agent.subagents.subagent_definitions import SubagentCatalog, load_subagents
from tui.base.config import Settings
from tui.base.mcp_config import McpServerConfig
from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.search.giving_way import OPENING_SECONDS
from tui.store.search.searcher import HistorySearch
from tui.store.store_errors import UnknownSessionError

__all__ = ["McpServers", "RuntimeFactory", "SessionRequest", "SessionRuntime"]


class RuntimeFactory:
    """Opens sessions (new, existing, forked) with one model configuration."""

    def __init__(self, *, settings: Settings, data_dir: DataDir, workdir: Path, choice: ModelChoice,
                 chat_model: Model | None = None, project_servers: Sequence[McpServerConfig] = (),
                 mcp_notices: Sequence[str] = (), trusted_project: Path | None = None) -> None:
        """``chat_model`` replaces the model built from ``choice`` (library use, tests); ``project_servers``:
        the MCP servers of a trusted project's ``.mcp.json`` (see :mod:`tui.trust.project`), started with the
        user's own; ``mcp_notices``: lines said when the servers start (a ``.mcp.json`` left unread);
        ``trusted_project``: the root of the project when the user trusts it (its ``.deep-tui/`` and ``.claude/``
        skills, commands and agents are read then, never otherwise)."""
        self.chat_model = chat_model
        self.settings = settings
        self.data_dir = data_dir
        self.workdir = workdir
        self.choice = choice
        self.store = SessionStore(data_dir)
        self.search = HistorySearch(data_dir)
        """The search index over every session (one per process: the app's picker and every runtime share it)."""
        self.mcp = mcp_servers_for(settings, workdir=workdir, data_dir=data_dir, project_servers=project_servers,
                                   notices=mcp_notices)
        """The MCP servers every session's agent is offered (``None``: none configured); started by the app
        after its first frame, or by ``run``, with :meth:`McpServers.start`."""
        self.trusted_project = trusted_project
        self.extensions = Extensions.load(project_root=trusted_project)
        """The skills and custom commands of the user and the trusted project, read once, at start."""
        self._subagents: SubagentCatalog | None = None

    @property
    def subagents(self) -> SubagentCatalog:
        """The subagent definitions (the user's, and the trusted project's), read once, when first needed."""
        if self._subagents is None:
            self._subagents = load_subagents(project_root=self.trusted_project)
        return self._subagents

    @classmethod
    def create(
        cls, *, settings: Settings, data_dir: DataDir, workdir: Path, model_flag: str | None,
        project_servers: Sequence[McpServerConfig] = (), mcp_notices: Sequence[str] = (),
        trusted_project: Path | None = None,
    ) -> RuntimeFactory:
        """Resolve the model now so a bad name or missing key fails before anything is created."""
        choice = choose_model(model_flag, settings.model)
        build_model(choice.name, base_url=settings.base_url)
        if settings.summarization_model:
            build_model(settings.summarization_model, base_url=settings.base_url)
        return cls(settings=settings, data_dir=data_dir, workdir=workdir, choice=choice,
                   project_servers=project_servers, mcp_notices=mcp_notices, trusted_project=trusted_project)

    # -- synchronous core (store work is quick; the async wrappers keep the UI free) --

    def open_request_sync(self, request: SessionRequest) -> SessionRuntime:
        """New session, or the one ``--resume``/``--continue`` names, forked if asked."""
        if request.resume:
            session_id = self.store.resolve(request.resume)
        elif request.continue_latest:
            newest = self.store.newest()
            if newest is None:
                raise UnknownSessionError(f"no session to continue in {self.data_dir.sessions_dir}")
            session_id = newest
        else:
            return self._build(self.store.create(model=self.choice.name))
        if request.fork:
            return self._build(self.store.fork(session_id, model=self.choice.name))
        return self._build(self.store.open(session_id))

    def _build(self, handle: object) -> SessionRuntime:
        try:
            # One connection for the chat model and the summarizer: the same timeouts, retries and status line.
            connection = ProviderConnection(self.settings.provider)
            chat_model = self.chat_model or build_model(self.choice.name, base_url=self.settings.base_url,
                                                        connection=connection)
            summarizer = None
            if self.settings.summarization_model:
                summarizer = build_model(self.settings.summarization_model, base_url=self.settings.base_url,
                                         connection=connection)
            elif not self.choice.offline:
                summarizer = chat_model
            return SessionRuntime(
                settings=self.settings,
                data_dir=self.data_dir,
                workdir=self.workdir,
                handle=handle,  # type: ignore[arg-type]
                chat_model=chat_model,
                choice=self.choice,
                summarizer_model=summarizer,
                discard_empty=lambda: self.store.discard_if_untouched(handle.id),  # type: ignore[attr-defined]
                search=self.search,
                connection=connection,
                mcp=self.mcp,
                skills=self.extensions.skills,
                subagents=self.subagents,
            )
        except BaseException:
            handle.close()  # type: ignore[attr-defined]
            raise

    # -- RuntimeFactoryAPI --

    def use_model(self, name: str) -> None:
        self.choice = ModelChoice(name, "command")

    async def open_request(self, request: SessionRequest) -> SessionRuntime:
        return await asyncio.to_thread(self.open_request_sync, request)

    async def open_session(self, session_id: str) -> SessionRuntime:
        return await self._opening(lambda: self._build(self.store.open(self.store.resolve(session_id))))

    async def new_session(self) -> SessionRuntime:
        return await asyncio.to_thread(lambda: self._build(self.store.create(model=self.choice.name)))

    async def fork_session(self, session_id: str, upto: int | None = None) -> SessionRuntime:
        return await self._opening(
            lambda: self._build(self.store.fork(self.store.resolve(session_id), upto=upto, model=self.choice.name)),
        )

    async def _opening(self, open_it: Callable[[], SessionRuntime]) -> SessionRuntime:
        """``open_it`` in a thread, the search index's background catch-up holding meanwhile (reading a long
        history is O(history)); the app ends the hold once the session's last page is painted."""
        self.search.give_way.hold(OPENING_SECONDS)
        try:
            return await asyncio.to_thread(open_it)
        except BaseException:
            self.search.give_way.hold(0)
            raise
