"""The app's shape: no import circle among the modules of tui/app, and no two modules of tui share a name.

Type-only imports (under ``if TYPE_CHECKING``) and imports inside functions count too: a circle the type checker
sees is a circle a reader has to hold in their head. (import-linter's contracts leave type-only imports out.)
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import tui

PACKAGE = Path(tui.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Every module under ``folder`` → the modules under ``folder`` it imports (anywhere in its text)."""
    modules = {module_name(path): path for path in folder.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    imported.add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = {other for other in imported if other in modules and other != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle_through_a_type_only_import(tmp_path: Path) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_the_app_modules() -> None:
    graph = import_graph(PACKAGE / "app")
    assert "tui.app.chat.main_screen" in graph and graph["tui.app.app"], "the graph is read"
    assert circles(graph) == [], "cut the circle: a small protocol or a callable, or a message posted up"


def test_no_two_modules_of_tui_share_a_name() -> None:
    stems = Counter(path.stem for path in PACKAGE.rglob("*.py") if path.name != "__init__.py")
    shared = sorted(stem for stem, count in stems.items() if count > 1)
    assert shared == [], "give each module a name that says what it is"
