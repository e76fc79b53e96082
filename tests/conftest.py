"""Test-session guards shared by every test: no real model request may leave the process."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator

import pytest
from pydantic_ai import models

models.ALLOW_MODEL_REQUESTS = False

# Before any test module is imported: a module that copies os.environ for its subprocesses (ENV = {...}) gets
# a config home of the test session's own, never the user's (whose data-dirs.json filled with test data dirs,
# pushing the user's real data dirs out of the list the sandbox hides). Each test then gets its own below.
_SESSION_CONFIG_HOME = tempfile.mkdtemp(prefix="deep-tui-tests-config-")
os.environ["DEEP_TUI_CONFIG_HOME"] = os.path.join(_SESSION_CONFIG_HOME, "deep-tui")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_SESSION_CONFIG_HOME, "xdg")


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see real API keys or a user's model/data-dir settings."""
    for name in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "DEEP_TUI_MODEL",
        "DEEP_TUI_HOME",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _own_config_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test has a fresh, empty user config directory (no user config.toml, no trusted projects), so no
    test reads the real user's settings or trust store, and nothing a test trusts outlives it. It is outside
    the test's ``tmp_path`` (whose listing some tests check). Subprocesses inherit it."""
    home = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(home / "deep-tui"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))


@pytest.fixture(autouse=True)
def _restore_logging():  # type: ignore[no-untyped-def]
    """Commands under test configure logging (a file handler in their data directory): undo it after each test."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.fixture(autouse=True)
def _close_runtimes() -> Iterator[None]:
    """Close the session each app made by ``tests.app.app_support.make_app`` left open (its lock, its files),
    whether the test passed or not — in every directory whose tests build the app (app, search, store)."""
    from tests.app.app_support import OPENED

    OPENED.clear()
    yield
    for app in OPENED:
        asyncio.run(app.runtime.aclose())
    OPENED.clear()
