"""Command line: the app, one headless turn (``run``) and session management.

Every error the user can cause (bad flag, unknown or ambiguous id, locked
session, unreadable config, unknown model) prints one line on stderr and exits
with status 2, before anything on disk is created or changed.

Exit statuses: 0 done; 1 the turn failed (provider error, cancelled, the history
could not be saved) or a delete or trust was declined; 2 a usage or data problem (bad
flag or id, locked or unreadable session, config, model, data directory);
130 interrupted (Ctrl+C).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import TYPE_CHECKING

from tui import __version__
from tui.base.console import redacted_stderr, silence_stdout
from tui.base.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, UserFacingError
from tui.base.mode_names import MODE_NAMES
from tui.cli.command_parser import CommandParser

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "build_parser", "main", "silence_stdout"]

DESCRIPTION = """\
deep-tui: a full-screen terminal app for long sessions with a pydantic-ai agent.
The context window never overflows (tool outputs are evicted to disk, old tool
calls compacted, old turns summarized), and every message is kept on disk in
.deep-tui/sessions/<id>/messages.json.

With no command, opens the app. Without a model or API key it starts with an
offline stand-in model (type 'help' to it)."""

EPILOG = """\
commands:
  deep-tui run PROMPT...                 one turn, headless: prints the answer, records it
  deep-tui run -c "/keep TEXT"           add a standing instruction to a session (no model request);
                                         "/keep" alone lists them
  deep-tui run --output-format json | stream-json [--input-format stream-json] [PROMPT...]
                                         the same as JSON for scripts; stream-json input: a turn per stdin line
  deep-tui export [ID] [--format md|json] [-o FILE]
                                         a session as Markdown or JSON, to share (secrets redacted)
  deep-tui sessions [--json]             list sessions (id, title, updated, messages, tokens, cost, parent)
  deep-tui sessions rename ID TITLE      rename a session (any unique id prefix)
  deep-tui sessions delete ID [--yes]    delete a session
  deep-tui rewind [--session ID] [N] [--code | --conversation] [--dry-run] [--force]
                                         list the restore points, or put the files (and/or the
                                         conversation) back to before message N
  deep-tui sessions prune                remove restore points of deleted sessions from <data-dir>/checkpoints
  deep-tui search QUERY... [--session ID] [--json]
                                         find messages in every session's full history
  deep-tui serve [--host H] [--port P] [app options]
                                         serve the app to a browser (each tab its own deep-tui);
                                         prints the address to open, with its one-time token
  deep-tui trust [DIR] [--yes]           show what DIR's .deep-tui/config.toml would change and which
                                         MCP servers its .mcp.json would start, then trust it
  deep-tui trust --revoke [DIR]          ignore that project config again
  deep-tui trust --list                  list the trusted projects

config: defaults < ~/.config/deep-tui/config.toml (yours) < the project's ./.deep-tui/config.toml, only
  once you trust the project (or --config FILE, or <data-dir>/config.toml with --data-dir/DEEP_TUI_HOME)
  < environment < flags. A project's ./.mcp.json is part of its config: its MCP servers start only once
  you trust the project. An untrusted project config is ignored: 'run' says so on stderr, the app asks.

exit status:
  0 done, 1 the turn failed (or a delete or trust was declined), 2 a usage or data problem
  (bad flag or id, locked or unreadable session, config, model), 3 ('run --output-format json or
  stream-json' only) a tool call was refused, 130 interrupted (128 + N: stopped by signal N)

environment:
  DEEP_TUI_MODEL    model when --model is not given (before config.toml)
  DEEP_TUI_HOME     data directory when --data-dir is not given (default ./.deep-tui)
  DEEP_TUI_CONFIG_HOME
                    your config directory (default $XDG_CONFIG_HOME/deep-tui or ~/.config/deep-tui):
                    config.toml and trusted-projects.json
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GOOGLE_API_KEY / GEMINI_API_KEY
                    pick a default model for that provider when no model is set

log: <data-dir>/deep-tui.log (rotated at 1 MB, 3 older files kept); --debug logs more detail
"""


def _add_session_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options shared by the app and ``run``; ``suppress`` keeps a subparser from resetting them."""
    default = argparse.SUPPRESS if suppress else None
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-c", "--continue", dest="continue_", action="store_true",
                       default=argparse.SUPPRESS if suppress else False,
                       help="continue the session used last (a rename is not use)")
    group.add_argument("-r", "--resume", metavar="ID", default=default,
                       help="resume a session by id or any unique id prefix")
    parser.add_argument("--fork", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="copy the chosen session into a new one and continue there")
    parser.add_argument("-m", "--model", metavar="M", default=default,
                        help="chat model, e.g. anthropic:claude-sonnet-5-5, openai-chat:llama3, offline")
    parser.add_argument("--summarization-model", metavar="M", default=default,
                        help="model used for summaries (default: the chat model)")
    parser.add_argument("--base-url", metavar="URL", default=default,
                        help="OpenAI-compatible server for openai:/openai-chat: models")
    parser.add_argument("--context-window", metavar="N", type=int, default=default,
                        help="override the context window, in tokens")
    parser.add_argument("--workdir", metavar="DIR", default=default,
                        help="directory the file tools work in (default: current directory)")
    parser.add_argument("--read-timeout", metavar="SECONDS", type=float, default=default,
                        help="give up on a provider silent this long (default: provider.read_timeout, 120)")
    parser.add_argument("--retries", metavar="N", type=int, default=default,
                        help="attempts after a failed provider request (default: provider.retries, 3)")
    writes = parser.add_mutually_exclusive_group()
    writes.add_argument("--allow-writes", dest="writes", action="store_const", const="always", default=default,
                        help="let the agent write and edit files without asking ([tools] writes = \"always\")")
    writes.add_argument("--deny-writes", dest="writes", action="store_const", const="never",
                        default=argparse.SUPPRESS,
                        help="refuse every file write and edit ([tools] writes = \"never\"); by default the "
                             "app asks each time and 'run' refuses")
    commands = parser.add_mutually_exclusive_group()
    commands.add_argument("--allow-commands", dest="commands", action="store_const", const="always", default=default,
                          help="let the agent run shell commands (in the sandbox) without asking "
                               "([tools] commands = \"always\")")
    commands.add_argument("--deny-commands", dest="commands", action="store_const", const="never",
                          default=argparse.SUPPRESS,
                          help="refuse every shell command ([tools] commands = \"never\"); by default the app asks "
                               "each time and 'run' refuses")
    parser.add_argument("--mode", choices=MODE_NAMES, default=default,
                        help="the session's mode: default (changes ask first), accept-writes (file writes and edits "
                             "run without asking), plan (nothing is changed: the agent reads and plans) ([tools] "
                             "mode in your config; Shift+Tab cycles it in the app)")
    parser.add_argument("--no-sandbox", dest="sandbox", action="store_const", const=False, default=default,
                        help="run shell commands (the agent's and !command) WITHOUT the bubblewrap sandbox: they "
                             "can then read and change anything you can; only where no sandbox can be set up")
    _add_storage_options(parser, suppress=suppress)


def _add_storage_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--data-dir", metavar="DIR", default=default,
                        help="data directory (default: $DEEP_TUI_HOME or ./.deep-tui)")
    parser.add_argument("--config", metavar="FILE", default=default,
                        help="config file instead of the data directory's (yours: applies without trust)")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="log at debug level to <data-dir>/deep-tui.log (default: info)")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; ``--help`` text comes from here. Each command's own arguments are added when that
    command is used (:class:`~tui.cli.command_parser.CommandParser`): the app, the usual case, needs none."""
    parser = argparse.ArgumentParser(
        prog="deep-tui",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"deep-tui {__version__}")
    _add_session_options(parser, suppress=False)
    parser.add_argument("--served", action="store_true", help=argparse.SUPPRESS)  # set by `deep-tui serve`
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    commands.add_parser("run", help="run one turn headless and print the answer", build=_run_arguments,
                        description="Run one turn without the app: the answer goes to stdout, "
                                    "compaction events to stderr; the turn is recorded.")
    commands.add_parser(
        "export", help="write a session as Markdown or JSON", build=_export_arguments,
        description="Export a session to share it: its prompts, answers and tool calls (arguments, result "
                    "previews, the paths of saved outputs), a divider for each summary, and the todo list. Known "
                    "secrets are redacted. Opens the session read-only (it may be open in the app).")
    commands.add_parser("sessions", help="list, rename or delete sessions", build=_sessions_arguments,
                        description="List sessions, or rename/delete one.")
    commands.add_parser(
        "rewind", help="put the files (and/or the conversation) back to before a prompt", build=_rewind_arguments,
        description="Before the first change of each prompt (a write, an edit, a command, an MCP tool call, a "
                    "!command) deep-tui snapshots the working directory into <data-dir>/checkpoints. Without N, "
                    "list the session's restore points, newest first, with the files each prompt changed. With N "
                    "(the prompt's message number, as 'search' numbers messages): restore the files to how they "
                    "were before it and fork the conversation at the message before it (the default), only the "
                    "files (--code), or only the fork (--conversation). A file changed outside deep-tui since the "
                    "restore point stops the rewind with one line and exit status 2, nothing written, unless "
                    "--force. The files as they were are kept first, so a rewind can be undone: it prints the "
                    "number that undoes it.")
    commands.add_parser(
        "search", help="search every session's full history", build=_search_arguments,
        description="Search every session's full history (summarized turns, tool results and saved outputs "
                    "included) through the search index in <data-dir>/index.sqlite, which is brought up to "
                    "date first. Every word must occur, taken as typed (backslashes and quotes inside a word "
                    "are part of it); \"quote\" a phrase; any substring of 3 or more characters (or a CJK "
                    "word) matches, ignoring case; exact matches come first. Prints ranked hits: session, "
                    "message number, role, title and a snippet. Exit status: 0 with hits, 1 with none, 2 for "
                    "a bad query or id.")
    commands.add_parser(
        "serve", help="serve the app to a web browser", build=_serve_arguments,
        description="Serve deep-tui to a web browser through textual-serve: each browser tab runs its own "
                    "deep-tui with the app options given here. Prints the address to open once; it carries a "
                    "random token, and every request without it gets 403. Listens on 127.0.0.1 unless told "
                    "otherwise; another address needs --tls-cert/--tls-key, or --allow-plain-http.")
    commands.add_parser(
        "trust", help="trust a project's config (or revoke, or list)", build=_trust_arguments,
        description="A project's own config (DIR/.deep-tui/config.toml and DIR/.mcp.json) can send your API key "
                    "to another server, let the agent write without asking, or start programs as you (the MCP "
                    "servers of .mcp.json), so deep-tui ignores it until you trust the project. 'trust DIR' shows "
                    "what the config would change in your settings and which MCP servers it would start, asks, "
                    "and records the trust in your config directory (trusted-projects.json), for both files as "
                    "they are now: if either changes, deep-tui asks again. Flags and environment still win over "
                    "it.")
    return parser


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui run``'s arguments."""
    _add_session_options(parser, suppress=True)
    parser.add_argument("prompt", nargs="*", metavar="PROMPT",
                        help="the prompt (words are joined; @path attaches a file of the working directory)")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text",
                        help="text: the answer (default); json: one JSON object at the end; stream-json: one JSON "
                             "line per event and a final result line (schema: docs/usage.md, \"Scripting\"); "
                             "stdout then carries only JSON")
    parser.add_argument("--input-format", choices=("text", "stream-json"), default="text",
                        help="stream-json: read the prompts from stdin, one {\"type\": \"user\", \"prompt\": \"...\"} "
                             "per line, each a turn of the same session (needs --output-format json or stream-json)")


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui export``'s arguments."""
    _add_storage_options(parser, suppress=True)
    parser.add_argument("session", nargs="?", metavar="ID",
                        help="the session (any unique id prefix; default: the one used last)")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (replaced if it exists) instead of stdout")


def _sessions_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui sessions``' arguments and actions."""
    _add_storage_options(parser, suppress=True)
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    actions = parser.add_subparsers(dest="sessions_command", metavar="ACTION")
    rename = actions.add_parser("rename", help="rename a session")
    rename.add_argument("session", metavar="ID")
    rename.add_argument("title", nargs="+", metavar="TITLE")
    _add_storage_options(rename, suppress=True)  # options may also follow the action
    delete = actions.add_parser("delete", help="delete a session")
    delete.add_argument("session", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _add_storage_options(delete, suppress=True)

    prune = actions.add_parser("prune", help="remove restore points no session has any more",
                               description="Remove the restore points of sessions that were deleted, and the "
                                           "snapshots nothing refers to, from <data-dir>/checkpoints.")
    _add_storage_options(prune, suppress=True)


def _rewind_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui rewind``'s arguments."""
    _add_storage_options(parser, suppress=True)
    parser.add_argument("message", nargs="?", type=int, metavar="N", help="the prompt's message number")
    parser.add_argument("--session", metavar="ID", help="the session (any unique id prefix; default: the newest)")
    rewind_mode = parser.add_mutually_exclusive_group()
    rewind_mode.add_argument("--code", action="store_true", help="restore only the files")
    rewind_mode.add_argument("--conversation", action="store_true",
                             help="only fork the conversation at the message before N (no file changes)")
    parser.add_argument("--dry-run", action="store_true", help="print what would change and the diff; change nothing")
    parser.add_argument("--force", action="store_true",
                        help="take the restore point's version of files changed outside deep-tui too")
    parser.add_argument("--workdir", metavar="DIR", help="the working directory (default: current directory)")


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui search``'s arguments."""
    _add_storage_options(parser, suppress=True)
    parser.add_argument("query", nargs="+", metavar="QUERY", help="words to find (all must occur)")
    parser.add_argument("--session", metavar="ID",
                        help="only this session's history (with what a fork copied from its parent)")
    parser.add_argument("--json", action="store_true", help="print the hits as JSON")
    parser.add_argument("--limit", metavar="N", type=int, default=20, help="at most N hits (default 20)")


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui serve``'s arguments (the app's options, and where to listen)."""
    _add_session_options(parser, suppress=True)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--tls-cert", metavar="FILE", help="certificate (PEM) to serve HTTPS with")
    parser.add_argument("--tls-key", metavar="FILE", help="private key (PEM) of --tls-cert")
    parser.add_argument("--allow-plain-http", action="store_true",
                        help="serve a non-loopback address over plain HTTP (the token crosses the network in clear)")


def _trust_arguments(parser: argparse.ArgumentParser) -> None:
    """``deep-tui trust``'s arguments."""
    parser.add_argument("directory", nargs="?", metavar="DIR", help="the project directory (default: .)")
    trust_actions = parser.add_mutually_exclusive_group()
    trust_actions.add_argument("--revoke", action="store_true", help="forget the trust: the config and its MCP servers are ignored again")
    trust_actions.add_argument("--list", action="store_true", help="list the trusted projects")
    parser.add_argument("--yes", action="store_true", help="trust without asking (it still shows what changes)")


NO_SANDBOX_WARNING = ("deep-tui: warning: --no-sandbox: shell commands (the agent's and !command) run WITHOUT a "
                      "sandbox: they can read and change anything you can")
"""Printed on stderr at start whenever ``--no-sandbox`` is given (docs/usage.md, "Running shell commands")."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``deep-tui`` console script."""
    # deep-tui owns the terminal: pydantic-ai's first-run banner would corrupt the screen.
    # (The environment switch avoids importing pydantic-ai before --version/--help.)
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.fork and not (args.continue_ or args.resume):
        parser.error("--fork needs --continue or --resume ID")
    if args.command == "run" and args.input_format == "stream-json":
        if args.prompt:
            parser.error("--input-format stream-json reads the prompts from stdin: give no PROMPT")
        if args.output_format == "text":
            parser.error("--input-format stream-json needs --output-format json or stream-json")
    elif args.command == "run" and not " ".join(args.prompt).strip():
        parser.error("the prompt is empty")
    if args.command == "run" and _is_keep(args.prompt) and args.output_format != "text":
        parser.error("/keep prints its lines as text: leave out --output-format")
    if args.command == "run" and _is_keep(args.prompt) and not (args.continue_ or args.resume):
        parser.error("/keep adds a standing instruction to a session: give --continue or --resume ID")
    if args.command == "trust" and args.list and args.directory:
        parser.error("trust --list takes no directory")
    if args.command == "rewind" and args.message is None and (args.code or args.conversation or args.dry_run
                                                              or args.force):
        parser.error("--code, --conversation, --dry-run and --force need N, the prompt's message number")
    if args.command == "rewind" and args.message is not None and args.message < 1:
        parser.error("N must be a message number (1 or more)")
    if args.command == "search" and args.limit < 1:
        parser.error("--limit must be at least 1")
    if getattr(args, "context_window", None) is not None and args.context_window < 1000:
        parser.error("--context-window must be at least 1000 tokens")
    if getattr(args, "read_timeout", None) is not None and not (0.01 <= args.read_timeout <= 86_400):
        parser.error("--read-timeout must be between 0.01 and 86400 seconds")
    if getattr(args, "retries", None) is not None and not (0 <= args.retries <= 20):
        parser.error("--retries must be between 0 and 20")

    if args.command == "search":  # the data directory alone: no config, trust or model (a quick command)
        gc.disable()  # the collector's passes over the start-up's imports only add to a quick command's time
        from tui.cli.search_command import search_entry

        with redacted_stderr():
            return _launch(search_entry, args)
    if args.command is None:
        # The app's start-up allocates a lot and frees little: the collector's passes over the growing
        # heap would only delay the first frame. The app enables it again once its session is open.
        gc.disable()
    from tui.cli.launch import launch

    if getattr(args, "sandbox", None) is False and args.command in (None, "run", "serve"):
        print(NO_SANDBOX_WARNING, file=sys.stderr)
    with redacted_stderr():  # a key a provider echoed in an error never reaches the terminal
        return _launch(launch, args)


def _is_keep(prompt: Sequence[str]) -> bool:
    words = " ".join(prompt).split()
    return bool(words) and words[0] == "/keep"


def _launch(launch: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return launch(args)
    except UserFacingError as error:
        print(f"deep-tui: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("deep-tui: interrupted", file=sys.stderr)
        # The user wants out now: the interpreter's last collection over the whole heap at exit takes about a
        # second on a busy machine; frozen objects are left to the operating system instead.
        gc.freeze()
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `deep-tui sessions | head -1`: the reader left; that is not an error
        silence_stdout()
        return 0
    finally:
        gc.enable()


if __name__ == "__main__":
    raise SystemExit(main())
