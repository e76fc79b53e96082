"""Issue 11.7: the log file (rotation, --debug, Python warnings), nothing on the terminal under the app,
store warnings and failed turns' tracebacks in the log."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_idle
from tui.base.log_setup import LOG_BACKUPS, configure_logging
from tui.cli.main import build_parser, main


def test_the_log_is_written_to_the_data_directory_at_info_and_debug_with_the_flag(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = configure_logging(data)
    assert path == data / "deep-tui.log" and not data.exists(), "nothing is created before something is logged"
    logging.getLogger("tui.test").debug("hidden detail")
    logging.getLogger("tui.test").info("the session opened")
    text = path.read_text()
    assert "INFO" in text and "tui.test: the session opened" in text and "hidden detail" not in text
    configure_logging(data, debug=True)
    logging.getLogger("tui.test").debug("now shown")
    assert "now shown" in path.read_text()
    assert sum(1 for h in logging.getLogger().handlers if getattr(h, "baseFilename", None) == str(path)) == 1, \
        "configuring again replaces the handler"


def test_the_log_rotates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.base.log_setup.LOG_MAX_BYTES", 2_000)
    path = configure_logging(tmp_path)
    for number in range(200):
        logging.getLogger("tui.test").info("line %d of a long run, padded to fill the file quickly", number)
    rotated = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("deep-tui.log."))
    assert rotated == [f"deep-tui.log.{n}" for n in range(1, LOG_BACKUPS + 1)]
    assert path.stat().st_size <= 2_000
    assert "line 199" in path.read_text()


def test_python_warnings_and_logged_warnings_go_to_the_file_not_the_terminal(tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    path = configure_logging(tmp_path)
    warnings.warn("a library complains", UserWarning, stacklevel=1)
    logging.getLogger("tui.store.events_file").warning("events.jsonl: skipped 2 unreadable lines")
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    text = path.read_text()
    assert "a library complains" in text and "skipped 2 unreadable lines" in text


def test_headless_commands_also_print_warnings_on_stderr(tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    configure_logging(tmp_path, stderr=True)
    logging.getLogger("tui.test").info("only in the file")
    logging.getLogger("tui.test").warning("worth seeing")
    assert capfd.readouterr().err == "deep-tui: warning: worth seeing\n"


def test_debug_flag_and_help(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert "deep-tui.log" in build_parser().format_help()
    assert main(["sessions", "--data-dir", str(tmp_path / "data"), "--debug"]) == 0
    assert logging.getLogger().level == logging.DEBUG
    assert main(["sessions", "--data-dir", str(tmp_path / "data")]) == 0
    assert logging.getLogger().level == logging.INFO
    capsys.readouterr()


async def test_in_the_app_store_warnings_and_a_failed_turn_traceback_reach_the_log_not_stderr(
        tmp_path: Path, capfd) -> None:  # type: ignore[no-untyped-def]
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("the provider SDK broke")

    async def broken_stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        raise RuntimeError("the provider SDK broke")
        yield ""  # pragma: no cover - makes this an async generator

    factory = make_factory(tmp_path, chat_model=FunctionModel(broken, stream_function=broken_stream))
    path = configure_logging(factory.data_dir.root)
    handle = factory.store.create(model="offline")
    events = factory.data_dir.session_dir(handle.id) / "events.jsonl"
    handle.close()
    events.write_text('{"kind": "usage", "tokens": 10, "window": 1000, "window_source": "config"}\nnot json\n{bro\n')
    from tui.agent.session.factory import SessionRequest

    app = make_app(factory, SessionRequest(resume=handle.id))
    capfd.readouterr()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        assert app.is_running
    captured = capfd.readouterr()
    assert "skipped" not in captured.err and "Traceback" not in captured.err, captured.err
    text = path.read_text()
    assert "skipped 2 unreadable lines" in text
    assert "turn failed unexpectedly" in text and "Traceback" in text and "RuntimeError: the provider SDK broke" in text
