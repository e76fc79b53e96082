"""Esc Esc: two presses within the window, in an empty prompt, make one pair; anything else does not."""

from __future__ import annotations

from tui.app.double_escape import DoubleEscape


def test_the_pair_rule() -> None:
    now = [0.0]
    rule = DoubleEscape(window=0.6, clock=lambda: now[0])
    assert not rule.press(prompt_empty=True)
    now[0] = 0.3
    assert rule.press(prompt_empty=True)  # the second, in time
    now[0] = 0.5
    assert not rule.press(prompt_empty=True)  # the pair was used up: this starts a new one
    now[0] = 1.5
    assert not rule.press(prompt_empty=True)  # too late
    now[0] = 1.7
    assert not rule.press(prompt_empty=False)  # text in the prompt: Esc is not a rewind
    now[0] = 1.8
    assert not rule.press(prompt_empty=True)
    rule.reset()  # a key in between
    now[0] = 1.9
    assert not rule.press(prompt_empty=True)
    now[0] = 2.0
    assert rule.press(prompt_empty=True)
