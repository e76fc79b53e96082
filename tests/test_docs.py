"""The docs say the truth about the code: docs/architecture.md names every module."""

from __future__ import annotations

import re
from pathlib import Path

import tui

PACKAGE = Path(tui.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def test_the_architecture_names_every_module() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    modules = sorted(path for path in PACKAGE.rglob("*.py") if path.name != "__init__.py")
    missing = [str(path.relative_to(PACKAGE)) for path in modules if not re.search(rf"\b{path.stem}\b", text)]
    assert missing == [], "add each to the module map in docs/architecture.md"
