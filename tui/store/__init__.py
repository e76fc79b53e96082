"""Sessions on disk (DESIGN §2). No Textual here."""

from tui.store.errors import StoreError
from tui.store.handle import SessionHandle
from tui.store.messages_file import LoadResult, MessagesFile
from tui.store.meta import ParentRef, SessionMeta, UsageSnapshot
from tui.store.session_store import SessionStore

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
