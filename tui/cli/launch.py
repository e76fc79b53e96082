"""From parsed arguments to a running app, a headless turn, or a sessions command.

Everything that can fail because of user input is checked here first
(config, model, session id, lock) so a failure changes nothing on disk.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.base.config import ConfigError, Settings
from tui.base.config_layers import ConfigLayer, read_config_file, settings_from_layers
from tui.base.errors import UserFacingError
from tui.base.mcp_config import PROJECT_FILE_NAME
from tui.base.paths import DATA_DIR_ENV, DataDir, data_dir_is_chosen, trust_store_file, user_config_file

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from tui.agent.session.factory import RuntimeFactory, SessionRuntime
    from tui.agent.session.request import SessionRequest
    from tui.base.mcp_config import McpServerConfig
    from tui.trust.project import PendingProject, TrustChoice

# The trust modules are imported where a project's config is read or decided on: with a data directory or a
# config file of the user's own choosing (--data-dir, $DEEP_TUI_HOME, --config) there is none, and the
# app's first frame does not wait for them.


@dataclass(frozen=True)
class LaunchContext:
    """Everything resolved from flags, environment and config."""

    settings: Settings
    data_dir: DataDir
    workdir: Path
    model_flag: str | None
    project_trusted: bool = True
    """False while a project config is ignored (not trusted, or changed since it was); True when the project's
    config applies, and when there is no project config to worry about."""
    project_servers: tuple[McpServerConfig, ...] = ()
    """The MCP servers of the project's ``.mcp.json`` once the project is trusted (as the trust code read and
    digested it: the file is not read again)."""
    mcp_notices: tuple[str, ...] = ()
    """Said when the MCP servers start: a ``.mcp.json`` left unread because the user chose the config."""
    pending_project: PendingProject | None = None
    """The ignored project config, waiting for the user's decision (the app asks; ``run`` says so)."""
    flag_values: Mapping[str, Any] = field(default_factory=dict)
    """The setting flags given (they win over every config file)."""
    trusted_project: Path | None = None
    """The project's root when its config is trusted and applies: its subagent definitions are read then (and
    only then: an untrusted project's files are inert)."""

    def with_project(self, apply: bool) -> LaunchContext:
        """This context once the user has decided: the pending project config applied, or left out."""
        pending = self.pending_project
        if pending is None:
            return self
        if not apply:
            return replace(self, pending_project=None)
        try:
            settings = settings_from_layers(pending.layers).with_overrides(**self.flag_values)
        except ConfigError as error:
            raise UserFacingError(str(error)) from None
        return replace(self, settings=settings, project_trusted=True, pending_project=None,
                       project_servers=pending.config.servers, trusted_project=pending.config.root)


def resolve_context(args: argparse.Namespace) -> LaunchContext:
    """Settings (defaults < user config < trusted project config or ``--config`` < environment < flags),
    data directory and working directory. The project's ``.mcp.json`` is part of its config: its servers start
    only once the project is trusted, and with ``--config`` or a chosen data directory it is not read."""
    data_flag = getattr(args, "data_dir", None)
    data_dir = DataDir.resolve(data_flag)
    unusable = data_dir.unusable_reason()
    if unusable:
        raise UserFacingError(unusable)
    config_flag = getattr(args, "config", None)
    flag_values = {key: value for key, value in (
        ("summarization_model", getattr(args, "summarization_model", None)),
        ("base_url", getattr(args, "base_url", None)),
        ("window", getattr(args, "context_window", None)),
        ("read_timeout", getattr(args, "read_timeout", None)),
        ("retries", getattr(args, "retries", None)),
        ("writes", getattr(args, "writes", None)),
        ("commands", getattr(args, "commands", None)),
        ("sandbox", getattr(args, "sandbox", None)),
        ("mode", getattr(args, "mode", None)),
    ) if value is not None}
    pending: PendingProject | None = None
    project_servers: tuple[McpServerConfig, ...] = ()
    mcp_notices: tuple[str, ...] = ()
    trusted_project: Path | None = None
    try:
        layers = _present([read_config_file(user_config_file(), required=False)])
        if config_flag:  # the user's own choice: it takes the project config's place
            layers += _present([read_config_file(Path(config_flag).expanduser(), required=True)])
            _remember_config_file(Path(config_flag).expanduser())
            mcp_notices = _unread_mcp_json("--config")
        elif data_dir_is_chosen(data_flag):  # --data-dir or $DEEP_TUI_HOME: the user's own data directory
            layers += _present([read_config_file(data_dir.config_file, required=False, follow_links=False)])
            mcp_notices = _unread_mcp_json("--data-dir" if data_flag else f"${DATA_DIR_ENV}")
        else:  # ./.deep-tui and ./.mcp.json belong to the project here: they apply once the project is trusted
            from tui.trust.project import assess_project
            from tui.trust.store import TrustStore

            trusted, pending = assess_project(Path.cwd(), layers, TrustStore(trust_store_file()))
            if trusted is not None:
                layers += _present([trusted.layer])
                project_servers = trusted.servers
                trusted_project = trusted.root
        settings = settings_from_layers(layers).with_overrides(**flag_values)
    except ConfigError as error:
        raise UserFacingError(str(error)) from None
    workdir_flag = getattr(args, "workdir", None)
    workdir = Path(workdir_flag).expanduser().resolve() if workdir_flag else Path.cwd().resolve()
    if not workdir.is_dir():
        raise UserFacingError(f"--workdir is not a directory: {workdir}")
    return LaunchContext(settings, data_dir, workdir, getattr(args, "model", None),
                         project_trusted=pending is None, project_servers=project_servers, mcp_notices=mcp_notices,
                         pending_project=pending, flag_values=flag_values, trusted_project=trusted_project)


def _remember_config_file(config: Path) -> None:
    """Record a ``--config`` file among the places commands never see (it applies without trust: a command
    changing it could add an MCP server the next start runs unsandboxed)."""
    from tui.trust.known_dirs import record_config_file

    try:
        record_config_file(config)
    except OSError as error:
        logger.warning("cannot record %s among the files commands must not see: %s", config, error)


def _unread_mcp_json(chosen: str) -> tuple[str, ...]:
    """The notice for a ``.mcp.json`` that is not read because ``chosen`` replaced the project's config."""
    if not os.path.lexists(Path.cwd() / PROJECT_FILE_NAME):
        return ()
    return (f"{PROJECT_FILE_NAME} ignored: with {chosen} the project's config is not read, so its MCP servers were "
            "not started",)


def _present(layers: list[ConfigLayer | None]) -> list[ConfigLayer]:
    return [layer for layer in layers if layer is not None]


class ProjectTrustGate:
    """The app's trust prompt meets the launch here: :meth:`decide` records the user's answer and gives the
    settings of the session about to open (the opener reads :attr:`context` after the answer)."""

    def __init__(self, context: LaunchContext) -> None:
        if context.pending_project is None:
            raise ValueError("no project config is waiting for a decision")
        self._pending = context.pending_project
        self.context = context

    @property
    def pending(self) -> PendingProject:
        return self._pending

    def decide(self, choice: TrustChoice) -> tuple[Settings, str | None]:
        """Apply ``choice``; a trust that cannot be recorded still applies to this session (the warning says)."""
        from tui.trust.project import TrustChoice
        from tui.trust.store import TrustStore, TrustStoreError

        warning = None
        if choice is TrustChoice.TRUST:
            try:
                TrustStore(trust_store_file()).trust(self._pending.record())
            except TrustStoreError as error:
                warning = f"the trust could not be recorded ({error}); it applies to this session only"
        self.context = self.context.with_project(choice in (TrustChoice.TRUST, TrustChoice.ONCE))
        return self.context.settings, warning


def launch(args: argparse.Namespace) -> int:
    """Dispatch to the app, ``run``, ``sessions``, ``search`` or ``trust``; returns the exit status."""
    if args.command == "trust":
        from tui.cli.trust_command import run_trust_command

        return run_trust_command(args)
    context = resolve_context(args)
    from tui.base.log_setup import configure_logging

    # The app draws on the terminal: its log goes to the file only; the headless commands also
    # print warnings on stderr.
    configure_logging(context.data_dir.root, debug=bool(getattr(args, "debug", False)),
                      stderr=args.command in ("run", "sessions", "serve", "rewind", "export"))
    if args.command == "export":
        from tui.cli.export_command import run_export_command

        return run_export_command(args, context.data_dir)
    if args.command == "sessions":
        from tui.cli.session_commands import run_sessions_command

        return run_sessions_command(args, context.data_dir)
    if args.command == "rewind":
        from tui.cli.rewind_command import run_rewind_command

        return run_rewind_command(args, context.data_dir, context.workdir,
                                  max_file_bytes=int(context.settings.rewind.max_file_mb * 1024 * 1024))
    if args.command == "search":
        from tui.cli.search_command import run_search_command

        return run_search_command(args, context.data_dir)
    if args.command == "serve":  # config, data dir and flags were checked above; each tab checks the rest
        from tui.cli.serve.command import run_serve_command

        return run_serve_command(args)

    from tui.agent.session.request import SessionRequest

    request = SessionRequest(
        continue_latest=bool(getattr(args, "continue_", False)),
        resume=getattr(args, "resume", None),
        fork=bool(getattr(args, "fork", False)),
    )
    if args.command != "run":
        if request.resume:
            _check_resume_prefix(context.data_dir, request.resume)  # an unknown id is said before any UI
        from tui.app.run import run_app

        served = bool(getattr(args, "served", False))  # a browser tab of `deep-tui serve`
        if context.pending_project is None:
            return run_app(context.settings, context.data_dir, request,
                           opener=lambda: open_session(context, request), served=served)
        gate = ProjectTrustGate(context)  # the app asks first; the session opens with the answer's settings
        return run_app(context.settings, context.data_dir, request,
                       opener=lambda: open_session(gate.context, request), trust=gate,
                       served=served)
    if context.pending_project is not None:
        print(context.pending_project.ignored_line(), file=sys.stderr)
    try:
        factory = open_factory(context)
        if args.output_format != "text":
            from tui.cli.structured.structured_run import run_structured

            prompts = None if args.input_format == "stream-json" else [" ".join(args.prompt)]
            return run_structured(factory, request, prompts, stream=args.output_format == "stream-json")
        from tui.cli.headless import run_headless

        return run_headless(factory, request, " ".join(args.prompt))
    except _input_errors() as error:
        raise UserFacingError(str(error)) from None


def _check_resume_prefix(data_dir: DataDir, prefix: str) -> None:
    from tui.store.session_ids import list_session_ids, resolve_prefix
    from tui.store.store_errors import StoreError

    try:
        resolve_prefix(list_session_ids(data_dir.sessions_dir), prefix, data_dir.sessions_dir)
    except (StoreError, OSError) as error:
        raise UserFacingError(str(error)) from None


def _input_errors() -> tuple[type[Exception], ...]:
    from tui.agent.models.choice import ModelConfigError
    from tui.store.store_errors import StoreError

    return (StoreError, ModelConfigError)


def open_factory(context: LaunchContext) -> RuntimeFactory:
    """Resolve the model (a bad name or a missing key fails here, before anything is created)."""
    from tui.agent.session.factory import RuntimeFactory

    return RuntimeFactory.create(settings=context.settings, data_dir=context.data_dir, workdir=context.workdir,
                                 model_flag=context.model_flag, project_servers=context.project_servers,
                                 trusted_project=context.trusted_project,
                                 mcp_notices=context.mcp_notices)


def open_session(context: LaunchContext, request: SessionRequest) -> tuple[RuntimeFactory, SessionRuntime]:
    """Factory and opened session, with every user-caused failure as :class:`UserFacingError`."""
    try:
        factory = open_factory(context)
        return factory, factory.open_request_sync(request)
    except _input_errors() as error:
        raise UserFacingError(str(error)) from None
