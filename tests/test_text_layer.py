"""tui/text sits below chain, store and agent: none of its modules imports them, type-only imports included
(import-linter's layer contract leaves those out, so a type-only arrow up would go unseen)."""

from __future__ import annotations

import ast
from pathlib import Path

import tui

TEXT = Path(tui.__file__).parent / "text"
ALLOWED = ("tui.text", "tui.base")


def imported_tui_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "tui" or name.startswith("tui.")}


def test_text_imports_nothing_above_it_not_even_for_types() -> None:
    upward = {f"{path.name} → {name}" for path in sorted(TEXT.glob("*.py")) for name in imported_tui_modules(path)
              if not name.startswith(ALLOWED)}
    assert upward == set(), "give the text helper a small protocol of what it reads instead"


def test_the_store_cost_record_is_what_the_words_read() -> None:
    from tui.store.cost_totals import CostTotals
    from tui.text.cost_text import totals_details, totals_label

    totals = CostTotals(input_usd=0.5, output_usd=0.73, requests=2)
    assert totals_label(totals) == "$1.23"
    assert totals_details(totals).startswith("$1.23 (input $0.50, cached input $0.00, output $0.73)")
