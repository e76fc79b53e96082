"""LiveTurn's frame pacing: full rate while the CPU has idle time, a bounded share of it while it has none."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from tui.agent.turn_events import TextDelta, ToolCallFinished, ToolOutputDelta, ToolOutputEnded
from tui.app.widgets import live_turn
from tui.app.widgets.live_turn import FRAME_SECONDS, MAX_DRAW_SHARE, SLOWEST_FRAME_SECONDS, LiveTurn


class _Timer:
    def stop(self) -> None:
        pass


class _App:
    @contextmanager
    def batch_update(self) -> Iterator[None]:
        yield


class _Chat:
    """What LiveTurn needs of the chat to be paced (drawing itself is covered by test_streaming)."""

    shown_session = "s"
    is_attached = True
    app = _App()

    def set_interval(self, *_: Any, **__: Any) -> _Timer:
        return _Timer()

    def call_after_refresh(self, callback: Any, *args: Any) -> None:
        callback(*args)

    def __init__(self) -> None:
        self.soon: list[Any] = []

    def call_later(self, callback: Any) -> None:
        self.soon.append(callback)


class _Clock:
    """Wall time and the time the app's thread was runnable (running, or waiting for a CPU)."""

    def __init__(self) -> None:
        self.wall = 100.0
        self.cpu = 50.0

    def advance(self, wall: float, cpu: float) -> None:
        self.wall += wall
        self.cpu += cpu


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    clock = _Clock()
    monkeypatch.setattr(live_turn.time, "monotonic", lambda: clock.wall)
    monkeypatch.setattr(live_turn, "runnable_seconds", lambda: clock.cpu)
    return clock


def _turn(monkeypatch: pytest.MonkeyPatch, clock: _Clock, frame_cost: float, drawn: list[float]) -> LiveTurn:
    async def draw(self: LiveTurn) -> None:
        self._queue.clear()
        drawn.append(clock.wall)
        clock.advance(frame_cost, frame_cost)

    monkeypatch.setattr(LiveTurn, "_draw", draw)
    return LiveTurn(_Chat())  # type: ignore[arg-type]


async def test_a_busy_cpu_pauses_frames_so_drawing_keeps_its_share(monkeypatch: pytest.MonkeyPatch,
                                                                 clock: _Clock) -> None:
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.02, drawn=drawn)
    for _ in range(60):  # a stream that keeps the CPU fully busy between ticks
        turn.push(TextDelta("word "))
        await turn._frame()
        clock.advance(FRAME_SECONDS, FRAME_SECONDS)
    gaps = [later - earlier for earlier, later in pairwise(drawn)]
    # the first frame knows nothing of the load yet; from the second on, each waits out its cost's share
    assert len(gaps) > 5 and min(gaps[1:]) >= 0.02 * (1 / MAX_DRAW_SHARE - 1)
    assert 0.02 * len(drawn[1:]) / (clock.wall - drawn[1]) <= MAX_DRAW_SHARE * 1.2
    assert max(gaps) <= SLOWEST_FRAME_SECONDS + 2 * FRAME_SECONDS  # and never slower than that


async def test_with_idle_time_frames_come_at_the_full_rate(monkeypatch: pytest.MonkeyPatch, clock: _Clock) -> None:
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.02, drawn=drawn)
    for _ in range(30):  # a model at ordinary speed: the process mostly waits for the network
        turn.push(TextDelta("word "))
        await turn._frame()
        clock.advance(FRAME_SECONDS, 0.005)
    assert len(drawn) == 30


async def test_a_very_costly_frame_still_leaves_a_frame_every_so_often(monkeypatch: pytest.MonkeyPatch,
                                                                     clock: _Clock) -> None:
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.2, drawn=drawn)
    for _ in range(40):
        turn.push(TextDelta("word "))
        await turn._frame()
        clock.advance(FRAME_SECONDS, FRAME_SECONDS)
    gaps = [later - earlier for earlier, later in pairwise(drawn)]
    assert len(drawn) >= 3 and max(gaps) <= 0.2 + SLOWEST_FRAME_SECONDS + FRAME_SECONDS


async def test_nothing_to_draw_draws_nothing(monkeypatch: pytest.MonkeyPatch, clock: _Clock) -> None:
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.01, drawn=drawn)
    await turn._frame()
    assert drawn == []


async def test_markdown_parsed_after_mounting_counts_as_part_of_the_frame(monkeypatch: pytest.MonkeyPatch,
                                                                        clock: _Clock) -> None:
    """Textual's Markdown parses a settled segment after it is mounted: the frame waits for that (bounded) before
    its cost is taken, so a stream of paragraphs is paced by what its frames really cost."""
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.01, drawn=drawn)
    waits: list[float] = []

    class Answer:
        behind = False

        async def settled(self, timeout: float) -> None:
            waits.append(timeout)
            clock.advance(0.03, 0.03)  # the segments' parse and mount

    turn._answer = Answer()  # type: ignore[assignment]
    for _ in range(30):
        turn.push(TextDelta("paragraph\n\n"))
        await turn._frame()
        clock.advance(FRAME_SECONDS, FRAME_SECONDS)
    gaps = [later - earlier for earlier, later in pairwise(drawn)]
    assert waits and all(timeout == SLOWEST_FRAME_SECONDS for timeout in waits)
    assert min(gaps[1:]) >= min(SLOWEST_FRAME_SECONDS, (0.01 + 0.03) * (1 / MAX_DRAW_SHARE - 1)) - 1e-9
    assert min(gaps[1:]) > 0.01 * (1 / MAX_DRAW_SHARE - 1) + FRAME_SECONDS  # more than the drawing alone asks for


def test_runnable_time_is_running_plus_waiting_for_a_cpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stats = tmp_path / "schedstat"
    stats.write_text("1500000000 2500000000 17\n")  # ns running, ns waiting in the run queue, time slices
    monkeypatch.setattr(live_turn, "_SCHEDSTAT", str(stats))
    assert live_turn.runnable_seconds() == pytest.approx(4.0)


def test_without_schedstat_runnable_time_is_cpu_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(live_turn, "_SCHEDSTAT", str(tmp_path / "absent"))
    monkeypatch.setattr(live_turn.time, "process_time", lambda: 42.5)
    assert live_turn.runnable_seconds() == 42.5


@pytest.mark.skipif(not Path("/proc/thread-self/schedstat").exists(), reason="no Linux schedstat here")
def test_runnable_time_grows_while_working_and_not_while_sleeping() -> None:
    import time

    before = live_turn.runnable_seconds()
    time.sleep(0.2)
    slept = live_turn.runnable_seconds() - before
    start = time.monotonic()
    while time.monotonic() - start < 0.1:
        pass
    worked = live_turn.runnable_seconds() - before - slept
    assert slept < 0.1 and worked >= 0.09


async def test_no_frame_starts_before_the_one_before_is_painted(monkeypatch: pytest.MonkeyPatch,
                                                                clock: _Clock) -> None:
    """A frame's cost is known only once it is painted: until then no next frame starts (otherwise the pause its
    cost asks for is computed against the wrong frame and a busy stream gets frames at the full rate)."""
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.02, drawn=drawn)
    paints: list[Any] = []
    turn.chat.call_after_refresh = lambda callback, *args: paints.append((callback, args))  # type: ignore[method-assign]
    turn.push(TextDelta("word "))
    await turn._frame()
    clock.advance(FRAME_SECONDS, FRAME_SECONDS)
    turn.push(TextDelta("word "))
    await turn._frame()  # the first frame is not painted yet
    assert len(drawn) == 1
    callback, args = paints.pop()
    callback(*args)
    clock.advance(SLOWEST_FRAME_SECONDS, SLOWEST_FRAME_SECONDS)
    await turn._frame()
    assert len(drawn) == 2


@pytest.mark.parametrize("end", [ToolOutputEnded("c1", "[exit status 0 · 2.0 s]"),
                                 ToolCallFinished("c1", "execute", "[exit status 0 · 2.0 s]", 24)])
async def test_a_tools_end_is_drawn_at_once_whatever_pause_the_stream_asked_for(
        monkeypatch: pytest.MonkeyPatch, clock: _Clock, end: ToolOutputEnded | ToolCallFinished) -> None:
    """A command printing at full speed keeps the CPU busy, so frames pause between them; its end (the last lines
    and the exit status) is what the user waits for: it is drawn at once, not after the pause."""
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.03, drawn=drawn)
    while len(drawn) < 3:  # the output keeps the CPU busy: from the second frame on, each asks for a pause
        turn.push(ToolOutputDelta("c1", "line\n" * 1000))
        await turn._frame()
        clock.advance(FRAME_SECONDS, FRAME_SECONDS)
    assert turn._quiet_until > clock.wall + FRAME_SECONDS  # the stream's frames are paused
    count = len(drawn)
    turn.push(ToolOutputDelta("c1", "last line\n"))
    assert not turn.chat.soon  # more output waits for the pause
    turn.push(end)
    [frame] = turn.chat.soon  # a frame is asked for now
    await frame()
    assert len(drawn) == count + 1 and drawn[-1] == clock.wall - 0.03


async def test_a_tools_end_queued_while_a_frame_is_unpainted_is_drawn_right_after_that_paint(
        monkeypatch: pytest.MonkeyPatch, clock: _Clock) -> None:
    drawn: list[float] = []
    turn = _turn(monkeypatch, clock, frame_cost=0.03, drawn=drawn)
    paints: list[Any] = []
    turn.chat.call_after_refresh = lambda callback, *args: paints.append((callback, args))  # type: ignore[method-assign]
    turn.push(ToolOutputDelta("c1", "output\n"))
    await turn._frame()  # drawn, its paint not in yet
    turn.push(ToolOutputEnded("c1", "[exit status 0 · 1.0 s]"))
    [frame] = turn.chat.soon
    await frame()
    assert len(drawn) == 1  # no frame before the one before is painted
    callback, args = paints.pop()
    callback(*args)
    assert len(turn.chat.soon) == 2  # the paint asks for the end's frame at once, not at the next tick
    await turn.chat.soon[-1]()
    assert len(drawn) == 2 and not turn.behind
