"""Custom slash commands: ``commands/NAME.md`` from the user's folder and, only when trusted, a project's; the
expansion of ``$ARGUMENTS``, ``$1``, ``$2``; a built-in's name is never taken; links are not followed."""

from __future__ import annotations

import os
from pathlib import Path

from tests.agent.extension_support import user_commands, write_command
from tui.agent.slash_commands.custom import CustomCommand, load_custom_commands
from tui.app.command_registry import BUILT_IN_NAMES, all_commands, find, parse_slash, rank, use_custom_commands


def test_user_and_trusted_project_commands_untrusted_inert(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_command(user_commands(), "review", "---\ndescription: Review a file\n---\nReview $1 carefully.")
    write_command(user_commands(), "plain", "# Say hello\nHello there.")
    write_command(project / ".claude" / "commands", "review", "Project review of $ARGUMENTS")
    write_command(project / ".deep-tui" / "commands", "ship", "Ship it")

    untrusted = load_custom_commands(project_root=None)
    assert sorted(untrusted.commands) == ["plain", "review"]
    assert untrusted.commands["review"].description == "Review a file"
    assert untrusted.commands["plain"].description == "Say hello"

    trusted = load_custom_commands(project_root=project)
    assert sorted(trusted.commands) == ["plain", "review", "ship"]
    assert trusted.commands["review"].origin == "project"
    assert trusted.commands["review"].expand("a.py b.py") == "Project review of a.py b.py"


def test_expansion_of_arguments_and_positional_words(tmp_path: Path) -> None:
    command = CustomCommand("fix", "d", "Fix issue $1 in $2 ($3). All: $ARGUMENTS", "user", tmp_path / "fix.md")
    assert command.expand('42 "src/a b.py"') == 'Fix issue 42 in src/a b.py (). All: 42 "src/a b.py"'
    assert command.expand("'unclosed") == "Fix issue 'unclosed in  (). All: 'unclosed"
    no_placeholder = CustomCommand("n", "d", "Summarise the log.\n", "user", tmp_path / "n.md")
    assert no_placeholder.expand("") == "Summarise the log."
    assert no_placeholder.expand("only errors") == "Summarise the log.\n\nonly errors"


def test_links_bad_names_and_empty_files_are_skipped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    outside = write_command(tmp_path / "elsewhere", "steal", "SECRET PROMPT")
    folder = project / ".deep-tui" / "commands"
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "steal.md")
    os.symlink(tmp_path / "elsewhere", project / ".claude")
    write_command(folder, "Bad Name", "x")
    write_command(folder, "empty", "---\ndescription: nothing\n---\n")
    found = load_custom_commands(project_root=project)
    assert found.commands == {}
    joined = "\n".join(found.warnings)
    assert "steal.md" in joined and "symbolic link" in joined
    assert ".claude" in joined and "holds no prompt" in joined and "lower-case" in joined


def test_a_clash_with_a_built_in_never_replaces_it(tmp_path: Path) -> None:
    write_command(user_commands(), "compact", "Do something else")
    write_command(user_commands(), "deploy", "---\ndescription: Deploy\nargument-hint: env\n---\nDeploy to $1")
    found = load_custom_commands(project_root=None, reserved=BUILT_IN_NAMES)
    assert sorted(found.commands) == ["deploy"]
    assert any("/compact is a built-in" in warning for warning in found.warnings)
    # The registry refuses a clash too, whoever hands it one.
    clash = CustomCommand("help", "mine", "x", "project", tmp_path / "help.md")
    try:
        skipped = use_custom_commands([*found.commands.values(), clash])
        assert len(skipped) == 1 and "/help" in skipped[0]
        help_command = find("help")
        assert help_command is not None and help_command.custom is None
        deploy = find("deploy")
        assert deploy is not None and deploy.custom is not None
        assert deploy.slash == "/deploy [env]" and deploy.shown_description == "Deploy (user)"
        assert parse_slash("/deploy prod") == (deploy, "prod")
        assert deploy in [command for command, _ in rank("depl")]
        assert all_commands()[-1] is deploy
    finally:
        use_custom_commands([])
    assert find("deploy") is None
