"""follow_location: the user's place in a text replaced under it (issue 22.10)."""

from __future__ import annotations

from tui.app.text_places import follow_location


def lines(text: str) -> list[str]:
    return text.split("\n")  # as TextArea rows: a final newline leaves an empty last row


def test_a_line_appended_at_the_cursor_pushes_the_cursor_below_it() -> None:
    assert follow_location(lines("a\nb\n"), lines("a\nb\noutside\n"), (2, 0)) == (3, 0)


def test_lines_inserted_above_move_the_place_down_and_keep_its_column() -> None:
    assert follow_location(lines("a\nlikes tea\n"), lines("x\ny\na\nlikes tea\n"), (1, 6)) == (3, 6)


def test_a_change_below_leaves_the_place_alone() -> None:
    assert follow_location(lines("a\nb\nc"), lines("a\nb\nchanged\nd"), (1, 1)) == (1, 1)


def test_the_cursors_own_line_changed_keeps_its_row_and_clips_the_column() -> None:
    assert follow_location(lines("a\nlong line here\nc"), lines("a\nshort\nc"), (1, 12)) == (1, 5)


def test_the_cursors_line_deleted_puts_it_at_the_start_of_what_follows() -> None:
    assert follow_location(lines("a\ngone\nc\n"), lines("a\nc\n"), (1, 2)) == (1, 0)
    assert follow_location(lines("a\ngone"), lines("a"), (1, 2)) == (0, 1)


def test_a_place_past_the_old_text_goes_to_the_new_end() -> None:
    assert follow_location(lines("a"), lines("a\nbb"), (5, 0)) == (1, 2)


def test_repeated_blank_lines_do_not_confuse_the_match() -> None:
    old = lines("# M\n\n- a\n\n- b\n")
    new = lines("# M\n\n- a\n\n- b\n- outside\n")
    assert follow_location(old, new, (5, 0)) == (6, 0)
    assert follow_location(old, new, (4, 3)) == (4, 3)
