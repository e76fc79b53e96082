"""From parsed arguments to a running app, a headless turn, or a sessions command.

Everything that can fail because of user input is checked here first
(config, model, session id, lock) so a failure changes nothing on disk.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui.config import ConfigError, Settings, load_settings
from tui.errors import UserFacingError
from tui.paths import DataDir

if TYPE_CHECKING:
    from tui.agent.runtime import RuntimeFactory, SessionRuntime
    from tui.agent.session_request import SessionRequest


@dataclass(frozen=True)
class LaunchContext:
    """Everything resolved from flags, environment and config."""

    settings: Settings
    data_dir: DataDir
    workdir: Path
    model_flag: str | None


def resolve_context(args: argparse.Namespace) -> LaunchContext:
    """Settings (file, then flags), data directory and working directory."""
    data_dir = DataDir.resolve(getattr(args, "data_dir", None))
    unusable = data_dir.unusable_reason()
    if unusable:
        raise UserFacingError(unusable)
    config_flag = getattr(args, "config", None)
    config_path = Path(config_flag).expanduser() if config_flag else data_dir.config_file
    try:
        settings = load_settings(config_path, required=bool(config_flag))
        settings = settings.with_overrides(
            summarization_model=getattr(args, "summarization_model", None),
            base_url=getattr(args, "base_url", None),
            window=getattr(args, "context_window", None),
            read_timeout=getattr(args, "read_timeout", None),
            retries=getattr(args, "retries", None),
            writes=getattr(args, "writes", None),
            commands=getattr(args, "commands", None),
            sandbox=getattr(args, "sandbox", None),
        )
    except ConfigError as error:
        raise UserFacingError(str(error)) from None
    workdir_flag = getattr(args, "workdir", None)
    workdir = Path(workdir_flag).expanduser().resolve() if workdir_flag else Path.cwd().resolve()
    if not workdir.is_dir():
        raise UserFacingError(f"--workdir is not a directory: {workdir}")
    return LaunchContext(settings, data_dir, workdir, getattr(args, "model", None))


def launch(args: argparse.Namespace) -> int:
    """Dispatch to the app, ``run`` or ``sessions``; returns the exit status."""
    context = resolve_context(args)
    from tui.log_setup import configure_logging

    # The app draws on the terminal: its log goes to the file only; the headless commands also
    # print warnings on stderr.
    configure_logging(context.data_dir.root, debug=bool(getattr(args, "debug", False)),
                      stderr=args.command in ("run", "sessions"))
    if args.command == "sessions":
        from tui.session_commands import run_sessions_command

        return run_sessions_command(args, context.data_dir)
    if args.command == "search":
        from tui.search_command import run_search_command

        return run_search_command(args, context.data_dir)

    from tui.agent.session_request import SessionRequest

    request = SessionRequest(
        continue_latest=bool(getattr(args, "continue_", False)),
        resume=getattr(args, "resume", None),
        fork=bool(getattr(args, "fork", False)),
    )
    if args.command != "run":
        if request.resume:
            _check_resume_prefix(context.data_dir, request.resume)  # an unknown id is said before any UI
        from tui.app.run import run_app

        return run_app(context.settings, context.data_dir, request, opener=lambda: open_session(context, request))
    try:
        factory = open_factory(context)
        from tui.headless import run_headless

        return run_headless(factory, request, " ".join(args.prompt))
    except _input_errors() as error:
        raise UserFacingError(str(error)) from None


def _check_resume_prefix(data_dir: DataDir, prefix: str) -> None:
    from tui.store.errors import StoreError
    from tui.store.session_ids import list_session_ids, resolve_prefix

    try:
        resolve_prefix(list_session_ids(data_dir.sessions_dir), prefix, data_dir.sessions_dir)
    except (StoreError, OSError) as error:
        raise UserFacingError(str(error)) from None


def _input_errors() -> tuple[type[Exception], ...]:
    from tui.agent.models import ModelConfigError
    from tui.store.errors import StoreError

    return (StoreError, ModelConfigError)


def open_factory(context: LaunchContext) -> RuntimeFactory:
    """Resolve the model (a bad name or a missing key fails here, before anything is created)."""
    from tui.agent.runtime import RuntimeFactory

    return RuntimeFactory.create(settings=context.settings, data_dir=context.data_dir, workdir=context.workdir,
                                 model_flag=context.model_flag)


def open_session(context: LaunchContext, request: SessionRequest) -> tuple[RuntimeFactory, SessionRuntime]:
    """Factory and opened session, with every user-caused failure as :class:`UserFacingError`."""
    try:
        factory = open_factory(context)
        return factory, factory.open_request_sync(request)
    except _input_errors() as error:
        raise UserFacingError(str(error)) from None
