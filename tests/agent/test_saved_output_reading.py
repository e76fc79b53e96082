"""Issue 29, the chain under real work: what was saved can be read back through its pointer — a binary-like
output (NUL bytes) shown safely, a line of 200 KB paged by character — through real agent runs."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from tui.agent.session.runtime import PAGE_ROOM_CHARS
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir
from tui.chain.estimate import CHARS_PER_TOKEN
from tui.chain.events import ChainEvent
from tui.chain.eviction import EvictionCapability

MARKERS = [f"MARKER-{n:03d}-ok" for n in range(8)]


def _binary_like_line() -> str:
    """One line of ~200 KB: markers spread through it, NUL and other control bytes between them, no newline."""
    filler = "ab\x00cd\x01\x1b[2Jef\x7f" * 2_000
    return "".join(f"{marker}{filler}" for marker in MARKERS) + "END"


def _unescape(text: str) -> str:
    return re.sub(r"\\x([0-9a-f]{2})", lambda match: chr(int(match.group(1), 16)), text)


class Reader:
    """Calls ``dump`` once, then follows read_file's own pointers (the eviction notice, then each footer's
    "continue with"), as a model would, until the line has been read to its end."""

    POINTER = re.compile(r"read_file\((path='[^']*'(?:, \w+=\d+)*)\)")

    def __init__(self) -> None:
        self.pages: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [part for part in last.parts if isinstance(part, ToolReturnPart)] \
            if isinstance(last, ModelRequest) else []
        if not returns:
            return ModelResponse(parts=[ToolCallPart("dump", {}, "dump-1")])
        content = returns[0].model_response_str()
        if returns[0].tool_name == "read_file":
            self.pages.append(content)
        pointers = self.POINTER.findall(content)
        if self.pages:  # on a page: the line's rest, as the cut notice or the footer says
            pointers = [pointer for pointer in pointers if "char_offset" in pointer]
        if not pointers:
            return ModelResponse(parts=[TextPart("read it all")])
        arguments = dict(re.findall(r"(\w+)=('[^']*'|\d+)", pointers[0]))
        args = {key: value.strip("'") if value.startswith("'") else int(value) for key, value in arguments.items()}
        return ModelResponse(parts=[ToolCallPart("read_file", args, f"read-{len(self.pages)}")])


def test_a_binary_like_long_output_is_read_back_whole_through_its_pointer(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(tmp_path / "data")
    eviction_tokens = 2_000  # a small window's: the pages are sized to stay inline, as the session sizes them
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()),
                              page_chars=lambda: eviction_tokens * CHARS_PER_TOKEN - PAGE_ROOM_CHARS)
    line = _binary_like_line()
    toolset = parts.toolsets[0]

    @toolset.tool_plain
    def dump() -> str:
        """A command's binary-like output."""
        return line

    events: list[ChainEvent] = []
    reader = Reader()
    agent = Agent(FunctionModel(reader), toolsets=parts.toolsets,
                  capabilities=[*parts.capabilities, EvictionCapability(data.large_results_dir, eviction_tokens, events.append)])
    result = agent.run_sync("dump it and read it", usage_limits=UsageLimits(request_limit=500))
    assert result.output == "read it all"
    assert len(events) == 1, "the output was saved, and no page of it was saved again"
    assert len(reader.pages) > 20, "the pointer was followed, page by page"
    assert not any("binary file" in page for page in reader.pages), "a saved output is never refused as binary"
    assert "[line cut: " in reader.pages[0] and "char_offset=2000" in reader.pages[0]
    shown = [page.splitlines()[0].split("\t", 1)[1] for page in reader.pages]
    assert all("\x00" not in text and "\x1b" not in text for text in shown), "control bytes are shown escaped"
    first = shown[0][:shown[0].index("… [line cut: ")]
    assert _unescape("".join([first, *shown[1:]])) == line, "every character, in order, through the pointer"
    assert all(marker in "".join(shown) for marker in MARKERS)
    assert reader.pages[-1].splitlines()[-1].startswith("[line 1, characters ") and f"of {len(line):,}]" in \
        reader.pages[-1]


def test_a_long_line_of_a_workdir_file_pages_by_character(tmp_path: Path) -> None:
    """The middle of a 200 KB line is in reach; a binary workdir file is still refused (not a saved output)."""
    work = tmp_path / "work"
    work.mkdir()
    middle = "x" * 100_000 + "THE-MIDDLE" + "y" * 100_000
    (work / "long.txt").write_text(f"first\n{middle}\r\nlast\n", encoding="utf-8")
    (work / "blob.bin").write_bytes(b"\x00\x01" * 100)
    data = DataDir(tmp_path / "data")
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()))
    calls: list[tuple[str, dict[str, object]]] = [
        ("read_file", {"path": "long.txt"}),
        ("read_file", {"path": "long.txt", "offset": 1, "char_offset": 100_000 - 5, "limit": 1}),
        ("read_file", {"path": "long.txt", "offset": 1, "char_offset": 199_990}),
        ("read_file", {"path": "long.txt", "offset": 1, "char_offset": 200_010}),
        ("read_file", {"path": "blob.bin"}),
    ]

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        made = sum(1 for message in messages if isinstance(message, ModelResponse))
        if made < len(calls):
            return ModelResponse(parts=[ToolCallPart(calls[made][0], calls[made][1], f"c{made}")])
        return ModelResponse(parts=[TextPart("done")])

    result = Agent(FunctionModel(script), toolsets=parts.toolsets, capabilities=parts.capabilities).run_sync("go")
    returns = [part.model_response_str() for message in result.all_messages() for part in message.parts
               if isinstance(part, ToolReturnPart)]
    whole, from_middle, the_end, past, blob = returns
    assert "[line cut: 200,010 characters; read on with read_file(path='long.txt', offset=1, char_offset=2000)]" \
        in whole and "     3\tlast" in whole
    assert from_middle.startswith("     2\txxxxxTHE-MIDDLEyyy")
    assert "[line 2, characters 99,996-149,995 of 200,010] — continue with read_file(path='long.txt', offset=1, " \
           "char_offset=149995)" in from_middle
    assert the_end.startswith("     2\tyyyyyyyyyyyyyyyyyyyy\n")  # the CRLF line's \r is not part of it
    assert "[line 2, characters 199,991-200,010 of 200,010] — the next line: read_file(path='long.txt', offset=2)" \
        in the_end
    assert "past the end of line 2" in past
    assert "binary file" in blob
