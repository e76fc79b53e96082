"""Sessions on disk (DESIGN §2). No Textual here.

Names are loaded on first use, so importing ``tui.store.store_errors`` (as the app does
at start-up) does not load pydantic-ai.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.store.handle import SessionHandle
    from tui.store.messages_file import LoadResult, MessagesFile
    from tui.store.meta import ParentRef, SessionMeta, UsageSnapshot
    from tui.store.session_store import SessionStore
    from tui.store.store_errors import StoreError

_WHERE = {
    "StoreError": "tui.store.store_errors",
    "SessionHandle": "tui.store.handle",
    "LoadResult": "tui.store.messages_file",
    "MessagesFile": "tui.store.messages_file",
    "ParentRef": "tui.store.meta",
    "SessionMeta": "tui.store.meta",
    "UsageSnapshot": "tui.store.meta",
    "SessionStore": "tui.store.session_store",
}

__all__ = [
    "LoadResult",
    "MessagesFile",
    "ParentRef",
    "SessionHandle",
    "SessionMeta",
    "SessionStore",
    "StoreError",
    "UsageSnapshot",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tui.store' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)
