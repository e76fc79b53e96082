"""The command line builds a command's arguments only when that command is used, and parses every command as
before."""

from __future__ import annotations

import argparse

import pytest

from tui.cli.command_parser import CommandParser
from tui.cli.main import build_parser


def _command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(commands.choices)


def _argument_count(parser: argparse.ArgumentParser) -> int:
    return sum(1 for action in parser._actions if not isinstance(action, argparse._HelpAction))


def test_the_app_builds_no_command() -> None:
    parser = build_parser()
    args = parser.parse_args(["--data-dir", "/tmp/data", "--model", "offline"])
    assert args.command is None and args.data_dir == "/tmp/data" and args.model == "offline"
    assert {name: _argument_count(command) for name, command in _command_parsers(parser).items()} == dict.fromkeys(
        ("run", "export", "sessions", "rewind", "search", "serve", "trust"), 0)


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--continue", "hello", "world"], {"command": "run", "prompt": ["hello", "world"], "continue_": True}),
    (["--model", "offline", "run", "hi"], {"command": "run", "model": "offline", "output_format": "text"}),
    (["export", "abc", "--format", "json"], {"command": "export", "session": "abc", "format": "json"}),
    (["sessions", "rename", "abc", "new", "title"], {"sessions_command": "rename", "title": ["new", "title"]}),
    (["rewind", "3", "--code"], {"command": "rewind", "message": 3, "code": True}),
    (["search", "needle", "--limit", "5"], {"command": "search", "query": ["needle"], "limit": 5}),
    (["serve", "--port", "9000", "--continue"], {"command": "serve", "port": 9000, "continue_": True}),
    (["trust", "--list"], {"command": "trust", "list": True, "directory": None}),
])
def test_each_command_is_built_when_used(argv: list[str], expected: dict[str, object]) -> None:
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    assert {key: args[key] for key in expected} == expected
    used = _command_parsers(parser)[args["command"]]
    assert _argument_count(used) > 0
    others = [name for name, command in _command_parsers(parser).items() if name != args["command"]]
    assert all(_argument_count(_command_parsers(parser)[name]) == 0 for name in others)


def test_a_command_s_help_and_errors_name_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as help_exit:
        build_parser().parse_args(["rewind", "--help"])
    assert help_exit.value.code == 0
    assert "--conversation" in capsys.readouterr().out
    with pytest.raises(SystemExit) as error_exit:
        build_parser().parse_args(["search"])
    assert error_exit.value.code == 2
    assert "QUERY" in capsys.readouterr().err


def test_built_once() -> None:
    calls: list[str] = []

    def build(parser: argparse.ArgumentParser) -> None:
        calls.append("built")
        parser.add_argument("--flag")

    parser = CommandParser(prog="x", build=build)
    assert parser.parse_args(["--flag", "1"]).flag == "1"
    assert "--flag" in parser.format_help()
    assert calls == ["built"]
