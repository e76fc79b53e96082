"""The app builds on Textual's public API: no widget overrides a private Textual method."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.message_pump import MessagePump

import tui.app


def test_no_widget_overrides_a_private_textual_method() -> None:
    overridden: list[str] = []
    for info in pkgutil.walk_packages(tui.app.__path__, "tui.app."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if not (inspect.isclass(cls) and cls.__module__ == module.__name__ and issubclass(cls, MessagePump)):
                continue
            for name, value in vars(cls).items():
                if not inspect.isfunction(value) or not name.startswith("_") or name.startswith("__"):
                    continue
                textual_base = next((base for base in cls.__mro__[1:]
                                     if base.__module__.startswith("textual") and name in vars(base)), None)
                if textual_base is not None:
                    overridden.append(f"{module.__name__}.{cls.__name__}.{name} (from {textual_base.__name__})")
    assert overridden == [], "use Textual's public hooks (bindings, on_* handlers, prevent_default, reactives)"
