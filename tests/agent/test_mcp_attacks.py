"""A hostile MCP server, or a hostile repository around one (issue 29, points 8–11), through the real test server
(tests/support/mcp_server.py) started by pydantic-ai's MCP client: escape sequences in its log notifications, a
planted ``mcp-logs`` link, a 50 MB result, a start slower than the handshake budget."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.agent.test_mcp_servers import make_factory
from tests.support.mcp_server import server_config
from tests.support.scripted_model import ScriptedModel
from tui.agent.session.factory import SessionRequest
from tui.cli.headless import _run


@pytest.mark.parametrize("planted", ["the directory", "the log"])
async def test_a_planted_mcp_logs_link_is_followed_by_nothing(tmp_path: Path, planted: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    precious = outside / "tests.log"
    precious.write_text("precious\n")
    logs = tmp_path / "data" / "mcp-logs"
    logs.parent.mkdir()
    if planted == "the directory":
        logs.symlink_to(outside, target_is_directory=True)
        link = logs
    else:
        logs.mkdir()
        link = logs / "tests.log"
        link.symlink_to(precious)
    model = ScriptedModel(("echo", {"text": "still served"}),)
    factory = make_factory(tmp_path, model, server_config(), mcp="always")
    out, err = io.StringIO(), io.StringIO()
    assert await _run(factory, SessionRequest(), "go", out, err) == 0
    assert precious.read_text() == "precious\n"  # neither truncated nor written
    assert sorted(path.name for path in outside.iterdir()) == ["tests.log"]
    assert model.returned("echo").content == "still served"  # the server ran, its stderr discarded
    said = [line for line in err.getvalue().splitlines() if "mcp-logs" in line]
    assert said == [f"deep-tui: warning: {link} is a symbolic link; deep-tui opens nothing in its data directory "
                    "through a link it did not make (remove it)"], err.getvalue()
