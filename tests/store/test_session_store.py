"""SessionStore: create/open/lock, resolve, list, fork, rename, delete, legacy and corrupt files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.base.paths import DataDir
from tui.store import SessionStore
from tui.store.store_errors import AmbiguousSessionError, SessionLockedError, UnknownSessionError


def exchange(prompt: str) -> list:
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(f"reply to {prompt}")])]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(DataDir(tmp_path / "data"))


def test_create_append_reopen(store: SessionStore) -> None:
    handle = store.create(model="offline")
    assert len(handle.id) == 12 and int(handle.id, 16) >= 0
    handle.append_messages(exchange("  plan the   migration\nnow "))
    handle.close()
    meta = json.loads((handle.directory / "session.json").read_text())
    assert meta["title"] == "plan the migration now"
    assert meta["message_count"] == 2 and meta["model"] == "offline"
    reopened = store.open(handle.id)
    assert reopened.messages.count() == 2
    reopened.close()


def test_session_json_is_written_at_the_flush_not_at_every_append_or_request(store: SessionStore) -> None:
    """One write of session.json per turn (the runtime flushes at its end), not one per append and three per
    request: appends, usage, cost and compactions wait for the flush (or the close), and are then all there.
    The first append writes at once, so a session with messages is never listed untitled."""
    from tui.store.cost_totals import CostTotals

    handle = store.create(model="offline")
    handle.append_messages(exchange("first"))
    meta_path = handle.directory / "session.json"
    written = meta_path.read_bytes()
    assert json.loads(written)["title"] == "first" and json.loads(written)["message_count"] == 2
    handle.record_usage(1_234, 8_000, "config")
    totals = CostTotals()
    totals.add(input_usd=0.5, cached_input_usd=0.0, output_usd=0.25)
    handle.record_cost(totals)
    handle.append_messages(exchange("second"))
    handle.record_compression()
    assert meta_path.read_bytes() == written  # not yet: the turn has not ended
    handle.flush_meta()
    meta = json.loads(meta_path.read_text())
    assert meta["compressions"] == 1
    assert meta["message_count"] == 4 and meta["last_usage"]["tokens"] == 1_234
    assert meta["cost"]["input_usd"] == pytest.approx(0.5)
    handle.record_usage(2_000, 8_000, "config")
    handle.close()
    assert json.loads(meta_path.read_text())["last_usage"]["tokens"] == 2_000  # the close writes what was left
    reopened = store.open(handle.id)
    assert reopened.meta.last_usage is not None and reopened.meta.last_usage.tokens == 2_000
    reopened.close()


def test_second_writer_in_another_process_is_refused(store: SessionStore, tmp_path: Path) -> None:
    handle = store.create()
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from tui.base.paths import DataDir
        from tui.store import SessionStore
        from tui.store.store_errors import SessionLockedError
        try:
            SessionStore(DataDir(Path({str(tmp_path / 'data')!r}))).open({handle.id!r})
        except SessionLockedError as error:
            print(error)
            sys.exit(3)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 3, result.stderr
    assert handle.id in result.stdout and "another deep-tui" in result.stdout
    with pytest.raises(SessionLockedError):
        store.open(handle.id)  # same process, second handle
    handle.close()
    store.open(handle.id).close()  # free again


def test_resolve_prefixes(store: SessionStore) -> None:
    first, second = store.create(), store.create()
    for handle in (first, second):
        handle.close()
    assert store.resolve(first.id) == first.id
    assert store.resolve(first.id[:6]) == first.id or first.id[:6] == second.id[:6]
    for hostile in ("", "../x", "/", "a\x00b", ".."):
        with pytest.raises(UnknownSessionError):
            store.resolve(hostile)
    with pytest.raises(UnknownSessionError):
        store.resolve("zzzz")
    (store.root / "abc111111111").mkdir()
    (store.root / "abc222222222").mkdir()
    with pytest.raises(AmbiguousSessionError, match="abc111111111"):
        store.resolve("abc")


def test_fork_whole_and_at_an_index(store: SessionStore) -> None:
    parent = store.create(model="offline")
    parent.append_messages(exchange("one") + exchange("two"))
    parent.close()
    whole = store.fork(parent.id)
    assert whole.messages.count() == 4
    assert whole.meta.parent is not None and whole.meta.parent.session == parent.id
    assert whole.meta.parent.index == 4
    whole.close()
    partial = store.fork(parent.id, upto=2)
    copied = ModelMessagesTypeAdapter.validate_json(partial.messages.path.read_bytes())
    assert [p.content for m in copied for p in m.parts] == ["one", "reply to one"]
    on_disk = json.loads((partial.directory / "session.json").read_text())
    assert on_disk["parent"] == {"session": parent.id, "index": 2}
    assert on_disk["message_count"] == 2
    partial.close()
    listed = {meta.id: meta for meta in store.list_sessions()}
    assert listed[partial.id].parent.session == parent.id


def test_rename_and_delete(store: SessionStore) -> None:
    handle = store.create()
    handle.append_messages(exchange("x"))
    with pytest.raises(SessionLockedError):
        store.delete(handle.id)
    handle.close()
    store.rename(handle.id, "  New   name ")
    assert store.list_sessions()[0].title == "New name"
    store.delete(handle.id)
    assert store.list_sessions() == []
    with pytest.raises(UnknownSessionError):
        store.delete(handle.id)


def test_rename_of_an_open_session_is_refused_so_it_cannot_be_lost(store: SessionStore) -> None:
    handle = store.create()
    handle.append_messages(exchange("x"))
    with pytest.raises(SessionLockedError):
        store.rename(handle.id, "elsewhere")
    handle.rename("through the handle")
    handle.close()
    assert store.meta(handle.id).title == "through the handle"


def test_empty_sessions_left_by_a_killed_app_are_cleared_and_never_continued(store: SessionStore) -> None:
    real = store.create()
    real.append_messages(exchange("real work"))
    real.close()
    abandoned = store.create()  # the app was killed before the first prompt: no discard ran
    abandoned.close()
    open_empty = store.create()  # the app running now, before its first prompt
    forked_empty = store.fork(real.id, upto=0)
    forked_empty.close()
    listed = {meta.id for meta in store.list_sessions()}
    assert listed == {real.id, open_empty.id, forked_empty.id}
    assert not abandoned.directory.exists()
    open_empty.close()
    assert store.newest() in (real.id, forked_empty.id)
    assert open_empty.id not in {meta.id for meta in store.list_sessions()}


def test_corrupt_session_json_is_kept_and_rebuilt(store: SessionStore) -> None:
    handle = store.create()
    handle.append_messages(exchange("keep me"))
    handle.close()
    meta_path = handle.directory / "session.json"
    meta_path.write_text("{ not json", encoding="utf-8")
    [meta] = store.list_sessions()
    assert meta.title == "keep me" and meta.message_count == 2
    assert (handle.directory / "session.json.corrupt").read_text() == "{ not json"
    assert json.loads(meta_path.read_text())["message_count"] == 2
    meta_path.write_text("{ broken again", encoding="utf-8")
    store.list_sessions()
    assert (handle.directory / "session.json.corrupt").read_text() == "{ not json", "the first copy is kept"
    assert (handle.directory / "session.json.corrupt.1").read_text() == "{ broken again"


def test_legacy_directory_with_only_messages_json(store: SessionStore) -> None:
    legacy = store.root / "from-pydantic-deep"
    legacy.mkdir(parents=True)
    original = ModelMessagesTypeAdapter.dump_json(exchange("legacy question") + exchange("more"))
    (legacy / "messages.json").write_bytes(original)
    [meta] = store.list_sessions()
    assert meta.id == "from-pydantic-deep" and meta.title == "legacy question" and meta.message_count == 4
    handle = store.open(store.resolve("from-p"))
    assert len(handle.messages.load_working_context()) == 4
    handle.append_messages(exchange("continued"))
    assert (legacy / "messages.json.orig").read_bytes() == original
    assert len(ModelMessagesTypeAdapter.validate_json((legacy / "messages.json").read_bytes())) == 6
    handle.close()


def test_listing_never_reads_histories(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(3):
        handle = store.create()
        handle.append_messages(exchange(f"session {number}"))
        handle.close()
    opened: list[str] = []
    real_open = Path.open
    real_read_bytes = Path.read_bytes

    def tracking_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        opened.append(self.name)
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    def tracking_read_bytes(self: Path) -> bytes:
        opened.append(self.name)
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "open", tracking_open)
    monkeypatch.setattr(Path, "read_bytes", tracking_read_bytes)
    titles = [meta.title for meta in store.list_sessions()]
    assert sorted(titles) == ["session 0", "session 1", "session 2"]
    assert "messages.json" not in opened


def test_titles_from_prompts_that_are_not_plain_strings() -> None:
    from pydantic_ai.messages import BinaryContent, CachePoint, ImageUrl, TextContent

    from tui.store.damage import damage_note
    from tui.store.meta import title_from

    prompt = ModelRequest(parts=[UserPromptPart([TextContent("describe", metadata={"k": 1}), CachePoint(),
                                                 ImageUrl("https://x.io/cat.png"),
                                                 BinaryContent(b"x" * 2048, media_type="image/png")])])
    assert title_from([prompt]) == "describe [image: https://x.io/cat.png] [image/png, 2 KB]"
    note = damage_note(0, reason="not JSON", size=10, kept_in=None)
    assert title_from([note, *exchange("the real first prompt")]) == "the real first prompt"


def test_a_title_is_what_was_typed_not_the_files_attached_or_a_command_run() -> None:
    from tui.base.metadata_keys import USER_COMMAND_KEY
    from tui.store.meta import title_from
    from tui.text.attachment_text import attachment_item

    attached = ModelRequest(parts=[UserPromptPart(["explain @app.py", attachment_item("app.py", 12, "text", "x = 1")])])
    assert title_from([attached]) == "explain @app.py"
    command = ModelRequest(parts=[UserPromptPart("[The user ran this shell command …]\nout\n[exit status 0]")],
                           metadata={USER_COMMAND_KEY: {"command": "ls", "status": "[exit status 0]"}})
    assert title_from([command]) is None
    assert title_from([command, attached]) == "explain @app.py"


def _used_at(store: SessionStore, prompt: str, when: float) -> str:
    """A closed session whose last use was at ``when``."""
    handle = store.create(model="offline")
    handle.append_messages(exchange(prompt))
    handle.close()
    meta = store.meta(handle.id)
    meta.updated = when
    meta.write(handle.directory / "session.json")
    return handle.id


def test_a_rename_is_not_use_so_the_last_used_session_stays_newest(store: SessionStore) -> None:
    """Issue 22.9: renaming an old session (closed, through the store, or open, through its handle) keeps its
    "updated", so ``--continue`` and the picker's order still follow the session last used."""
    old = _used_at(store, "old work", 1_000_000.0)
    last = _used_at(store, "last work", 2_000_000.0)
    store.rename(old, "Old work, renamed")
    assert store.meta(old).updated == 1_000_000.0
    assert store.newest() == last
    assert [meta.id for meta in store.list_sessions()] == [last, old]

    handle = store.open(old)
    handle.rename("Renamed while open")
    handle.close()
    assert store.meta(old).title == "Renamed while open" and store.meta(old).updated == 1_000_000.0
    assert store.newest() == last


def test_a_rename_after_unsaved_appends_records_that_use(store: SessionStore) -> None:
    """The appends a rename writes to session.json with it are use: "updated" moves to them."""
    old = _used_at(store, "old work", 1_000_000.0)
    handle = store.open(old)
    handle.append_messages(exchange("more work"))
    handle.rename("Renamed after use")
    assert store.meta(old).updated > 1_000_000.0
    handle.close()
