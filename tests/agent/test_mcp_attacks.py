"""A hostile MCP server, or a hostile repository around one (issue 29, points 8–11), through the real test server
(tests/support/mcp_server.py) started by pydantic-ai's MCP client: escape sequences in its log notifications, a
planted ``mcp-logs`` link, a 50 MB result, a start slower than the handshake budget."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest

from tests.agent.test_mcp_servers import make_factory, run_turn
from tests.support.mcp_server import big_text, server_config
from tests.support.scripted_model import ScriptedModel
from tui.agent.mcp.start_budget import MAX_STRETCH, handshake_budget, load_stretch
from tui.agent.mcp.status import McpNotice
from tui.agent.mcp.stdio import EDGE_BYTES, LineReader, Oversized, answered_id, too_large_answer
from tui.agent.session.factory import SessionRequest
from tui.agent.turn_events import McpServersStarting, TurnEvent, TurnFinished
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


async def test_a_50_mb_result_is_refused_in_linear_time_and_the_server_stays_alive(tmp_path: Path) -> None:
    model = ScriptedModel(("big", {"size": 50_000_000}), ("big", {"size": 3_000_000}), ("echo", {"text": "alive"}))
    factory = make_factory(tmp_path, model, server_config(), mcp="always", large_result_tokens=1_000)
    mcp = factory.mcp
    assert mcp is not None
    mcp.health_interval = 0.05  # pinged all along the transfer
    notices: list[McpNotice] = []
    mcp.listen(notices.append)
    mcp.start()
    try:
        events = await run_turn(factory)
        assert [view.status for view in mcp.views()] == ["ready"]
        assert await mcp.check("tests") is None
    finally:
        await mcp.aclose()
    assert isinstance(events[-1], TurnFinished), events[-1]
    refused = model.returns[0]
    assert refused.outcome == "failed", refused
    assert re.fullmatch(r"The MCP server's answer was 1\d\d\.\d MB, more than the 32\.0 MB deep-tui reads from an MCP "
                        r"server, so it was not read\. Ask the tool for less \(a narrower query, a page, a limit\)\.",
                        str(refused.content)), refused.content
    read = model.returns[1]  # under the cap: read whole (parsed off the event loop), then evicted byte for byte
    assert Path(read.metadata["deep_tui_evicted_path"]).read_text(encoding="utf-8") == big_text(3_000_000)  # type: ignore[index]
    assert model.returned("echo").content == "alive"
    assert notices == []  # never declared dead


def test_lines_are_split_across_chunks_and_an_oversized_one_keeps_only_its_edges() -> None:
    reader = LineReader(cap=100)
    assert reader.feed(b'{"a"') == []
    assert reader.feed(b':1}\n{"b":2}\n\n{"c"') == [b'{"a":1}', b'{"b":2}', b""]
    head = b'{"jsonrpc":"2.0","id":7,"result":{"text":"'
    lines = reader.feed(b':3}\n' + head + b"x" * 10_000)
    assert lines == [b'{"c":3}']
    [over] = reader.feed(b"y" * 10_000 + b'"}}\n{"d":4}')
    assert isinstance(over, Oversized) and over.size == len(head) + 20_003
    assert over.head.startswith(head) and len(over.head) == len(over.tail) == EDGE_BYTES
    assert over.tail.endswith(b'yyy"}}') and answered_id(over) == 7
    assert reader.feed(b"\n") == [b'{"d":4}']

    last = Oversized(5000, b'{"result":{"t":"' + b"x" * 100, b'x"},"id":"req-9"}')
    assert answered_id(last) == "req-9"
    assert answered_id(Oversized(5000, b'{"result":{"id":3,', b'"x"}}')) is None  # an inner id is not the answer's
    answer = too_large_answer(Oversized(50_000_000, head, b"}"), 32_000_000)
    assert answer is not None and answer.message.id == 7  # type: ignore[union-attr]
    assert too_large_answer(Oversized(50_000_000, b"[", b"]"), 32_000_000) is None


async def test_a_server_slower_than_its_timeout_on_a_loaded_machine_is_said_and_waited_for(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    model = ScriptedModel(("echo", {"text": "late, but here"}),)
    factory = make_factory(tmp_path, model, server_config("slow", "--wait-for", str(ready), timeout=0.5),
                           mcp="always")
    mcp = factory.mcp
    assert mcp is not None
    mcp.load_stretch = lambda: 100.0  # a machine 100 times slower than idle: 50 s
    mcp.start()
    runtime = await factory.open_request(SessionRequest())
    events: list[TurnEvent] = []
    try:
        async for event in runtime.run_turn("go"):
            events.append(event)
            if isinstance(event, McpServersStarting):
                assert mcp.starting() == ("slow",)
                await asyncio.sleep(1.0)  # past the idle budget (0.5 s): only the stretch keeps it starting
                ready.touch()
        views = mcp.views()
    finally:
        await runtime.aclose()
        await mcp.aclose()
    assert isinstance(events[0], McpServersStarting) and events[0].describe() == "starting MCP servers (slow)…"
    assert isinstance(events[-1], TurnFinished), events[-1]
    assert [view.status for view in views] == ["ready"]
    assert model.returned("echo").content == "late, but here"


async def test_a_server_that_outlasts_even_the_stretched_budget_says_both_figures(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, ScriptedModel(), server_config("slow", "--hang", timeout=0.2))
    assert factory.mcp is not None
    factory.mcp.load_stretch = lambda: 2.5
    out, err = io.StringIO(), io.StringIO()
    assert await _run(factory, SessionRequest(), "go", out, err) == 0
    lines = err.getvalue().splitlines()
    assert next(line for line in lines if "MCP" in line) == "deep-tui: starting MCP servers (slow)…"
    assert "deep-tui: MCP server slow failed to start: no answer to the MCP handshake within 0.5 s (0.2 s, stretched " \
           "for the machine's load); its tools are not available" in lines


def test_the_handshake_budget_grows_with_the_load_per_core_up_to_four_times() -> None:
    assert load_stretch(0.5, 2) == 1.0 and load_stretch(3.0, 2) == 1.5 and load_stretch(10.0, 2) == MAX_STRETCH == 4.0
    assert handshake_budget(10, load_stretch(10.0, 2)) == 40.0 and handshake_budget(10, 1.0) == 10
    assert 1.0 <= load_stretch() <= MAX_STRETCH
