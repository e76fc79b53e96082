"""Each metadata key deep-tui writes into messages.json is defined once, in tui/base/metadata_keys.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tui
from tui.base import metadata_keys

PACKAGE = Path(tui.__file__).parent
KEY = re.compile(r"deep_tui_[a-z_]+")


def test_no_module_types_a_metadata_key_literally() -> None:
    typed: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "metadata_keys.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.fullmatch(node.value):
                typed.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value}")
    assert typed == [], "import these from tui.base.metadata_keys instead"


def test_the_keys_are_distinct_and_namespaced() -> None:
    values = [value for name, value in vars(metadata_keys).items() if name.isupper()]
    assert len(values) == len(set(values)) >= 8
    assert all(KEY.fullmatch(value) for value in values)
