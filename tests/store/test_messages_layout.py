"""The scan's quick path for a file exactly as deep-tui writes it finds the same layout as the line-by-line
scan, and anything else (damage of any kind) falls back to the line-by-line scan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.test_damage import BAD_SCHEMA, history, lines_of
from tui.store import messages_layout
from tui.store.messages_layout import scan

LINES = lines_of(history(8))
CLEAN = b"[\n" + b",\n".join(LINES) + b"\n]\n"


def test_a_clean_file_takes_the_quick_path_and_finds_the_line_scans_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = messages_layout._scan_lines(CLEAN)
    assert expected.clean and len(expected.spans) == len(LINES)

    def not_called(data: bytes) -> messages_layout.Layout:
        raise AssertionError("a clean file is not scanned line by line")

    monkeypatch.setattr(messages_layout, "_scan_lines", not_called)
    assert scan(CLEAN) == expected
    assert [CLEAN[start:end] for start, end in scan(CLEAN).spans] == LINES


@pytest.mark.parametrize("data", [
    b"[\n" + b",\n".join(LINES) + b"\n]",  # no newline at the end
    b"[\n" + b",\r\n".join(LINES) + b"\n]\n",  # other line ends
    b"[\n" + b",\n".join([LINES[0], LINES[1][:-1] + b"\n}", *LINES[2:]]) + b"\n]\n",  # a newline inside a record
    b"[\n" + b",\n".join([LINES[0], LINES[1] + b"," + LINES[2], *LINES[3:]]) + b"\n]\n",  # two records on a line
    b"[\n" + b",\n".join([LINES[0], b" " + LINES[1], *LINES[2:]]) + b"\n]\n",  # a space before a record
    b"[\n" + b",\n".join([LINES[0], BAD_SCHEMA, b'{"kind":"request"}', *LINES[1:]]) + b"\n]\n",
    b"[\n" + b",\n".join([LINES[0], b"{}", b"[1]", *LINES[1:]]) + b"\n]\n",
    b"[\n" + b",\n".join([LINES[0], b"", *LINES[1:]]) + b"\n]\n",  # an empty line
    b"[\n\n]\n", b"[\n]\n", b"[]", b"", b"\n]\n",
])
def test_anything_else_gets_the_line_scans_layout(data: bytes) -> None:
    assert scan(data) == messages_layout._scan_lines(data)


edits = st.tuples(st.sampled_from(["overwrite", "insert", "truncate"]), st.integers(0, len(CLEAN)),
                  st.binary(max_size=20) | st.sampled_from([b"\n", b",\n", b",", b"\r", b" ", b"}", b"{", b"}{",
                                                            b"},\n{", b'{"parts":[', LINES[1]]))


@settings(max_examples=300, deadline=None)
@given(operations=st.lists(edits, max_size=3))
def test_any_bytes_get_the_line_scans_layout(operations: list[tuple[str, int, bytes]]) -> None:
    data = CLEAN
    for kind, at, chunk in operations:
        at = min(at, len(data))
        if kind == "truncate":
            data = data[:at]
        elif kind == "insert":
            data = data[:at] + chunk + data[at:]
        else:
            data = data[:at] + chunk + data[at + len(chunk):]
    assert scan(data) == messages_layout._scan_lines(data)
