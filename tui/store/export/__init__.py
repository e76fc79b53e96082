"""A session as a document to share: Markdown or JSON (``deep-tui export``, ``/export`` in the app)."""

from tui.store.export.document import EXPORT_VERSION, ExportEntry, SessionDocument, read_document
from tui.store.export.document_formats import render_json, render_markdown
from tui.store.export.session_export import default_export_path, export_session, export_to_file, format_for

__all__ = ["EXPORT_VERSION", "ExportEntry", "SessionDocument", "default_export_path", "export_session",
           "export_to_file", "format_for", "read_document", "render_json", "render_markdown"]
