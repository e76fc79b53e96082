"""``deep-tui serve`` hands every app option on to each tab's deep-tui, and refuses unsafe listening."""

from __future__ import annotations

import shlex
import sys

import pytest

from tui.base.errors import UserFacingError
from tui.cli.main import build_parser
from tui.cli.serve.command import FORWARDED_OPTIONS, SERVED_DRIVER, ServeOptions, app_command, forwarded_arguments
from tui.cli.serve.token_gate import is_loopback_host

SERVE_ONLY = {"command", "host", "port", "tls_cert", "tls_key", "allow_plain_http", "served"}


def test_every_app_option_is_forwarded() -> None:
    app_options = set(vars(build_parser().parse_args([]))) - SERVE_ONLY
    assert app_options - set(FORWARDED_OPTIONS) == set(), "add the new option to FORWARDED_OPTIONS"


def test_the_tab_command_carries_the_options_and_nothing_else(tmp_path: object) -> None:
    args = build_parser().parse_args(["serve", "--port", "9000", "--continue", "--model", "offline; rm -rf ~",
                                      "--deny-writes", "--data-dir", "data", "--context-window", "5000",
                                      "--allow-commands", "--no-sandbox"])
    forwarded = forwarded_arguments(args)
    assert forwarded[:2] == ["--continue", "--model"] and forwarded[2] == "offline; rm -rf ~"
    assert "--deny-writes" in forwarded and "--port" not in forwarded and "9000" not in forwarded
    assert "--allow-commands" in forwarded and "--no-sandbox" in forwarded and "--fork" not in forwarded
    assert forwarded[forwarded.index("--data-dir") + 1].endswith("/data")  # absolute: the tab's cwd may differ
    command = app_command(args)
    assert command.startswith(f"TEXTUAL_DRIVER={SERVED_DRIVER} exec ")
    words = shlex.split(command.split(" exec ", 1)[1])
    assert words[:4] == [sys.executable, "-m", "tui.cli", "--served"]
    assert "offline; rm -rf ~" in words  # quoted: the shell never sees it as a command


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("192.168.1.4", False), ("example.com", False), ("localhost.example.com", False),
])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_plain_http_off_loopback_needs_the_user_to_say_so(tmp_path: object) -> None:
    def options(host: str, *, plain: bool = False) -> ServeOptions:
        return ServeOptions(host=host, port=8000, tls_cert=None, tls_key=None, allow_plain_http=plain)

    options("127.0.0.1").check()
    with pytest.raises(UserFacingError, match="over plain HTTP"):
        options("0.0.0.0").check()
    options("0.0.0.0", plain=True).check()
