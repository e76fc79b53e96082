"""A session as a document to share: Markdown or JSON (``deep-tui export``, ``/export`` in the app)."""

from tui.store.export.document import EXPORT_VERSION, ExportEntry, SessionDocument, read_document
from tui.store.export.render import render_json, render_markdown

__all__ = ["EXPORT_VERSION", "ExportEntry", "SessionDocument", "read_document", "render_json", "render_markdown"]
