"""``[tools] commands`` and ``network`` in config.toml, the command flags, and ``--no-sandbox`` (a flag only)."""

from __future__ import annotations

import pytest

from tui.base.config import ConfigError, Settings, settings_from_mapping
from tui.cli.main import build_parser


def test_commands_and_network_from_the_config_file() -> None:
    settings = settings_from_mapping({"tools": {"commands": "always", "network": True}})
    assert (settings.tools.commands, settings.tools.network, settings.tools.sandbox) == ("always", True, True)
    assert (Settings().tools.commands, Settings().tools.network) == ("ask", False)


@pytest.mark.parametrize(("table", "message"), [
    ({"commands": "sometimes"}, "tools.commands must be one of ask, always, never"),
    ({"network": "yes"}, "tools.network must be true or false"),
    ({"sandbox": False}, "unknown key tools.sandbox"),  # only --no-sandbox turns the sandbox off
])
def test_bad_values_are_refused_naming_the_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_from_mapping({"tools": table}, source="config.toml")


@pytest.mark.parametrize(("argv", "commands", "sandbox"), [
    ([], None, None),
    (["--allow-commands"], "always", None),
    (["--deny-commands"], "never", None),
    (["--no-sandbox"], None, False),
])
def test_the_flags(argv: list[str], commands: str | None, sandbox: bool | None) -> None:
    args = build_parser().parse_args(argv)
    assert (args.commands, args.sandbox) == (commands, sandbox)
    settings = Settings().with_overrides(commands=args.commands, sandbox=args.sandbox)
    assert settings.tools.commands == (commands or "ask") and settings.tools.sandbox is (sandbox is not False)


def test_allow_and_deny_commands_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--allow-commands", "--deny-commands"])
    assert "not allowed with argument" in capsys.readouterr().err
