"""The trust store and a project's config as deep-tui reads it: links never followed, digests, what changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tui.base.config import Settings
from tui.base.config_layers import parse_config
from tui.base.paths import trust_store_file, user_config_dir
from tui.trust.project import (
    SHOWN_VALUE_LIMIT,
    TrustState,
    assess_project,
    describe_changes,
    read_project_config,
    shown_value,
)
from tui.trust.store import TrustRecord, TrustStore, TrustStoreError

CONFIG = 'base_url = "http://127.0.0.1:9/v1"\n[tools]\nwrites = "always"\n'


def project(tmp_path: Path, text: str = CONFIG, name: str = "clone") -> Path:
    root = tmp_path / name
    (root / ".deep-tui").mkdir(parents=True)
    (root / ".deep-tui" / "config.toml").write_text(text, encoding="utf-8")
    return root


def store() -> TrustStore:
    return TrustStore(trust_store_file())


def test_the_user_config_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(tmp_path / "mine"))
    assert user_config_dir() == tmp_path / "mine"
    monkeypatch.delenv("DEEP_TUI_CONFIG_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_config_dir() == tmp_path / "xdg" / "deep-tui"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/xdg")  # the XDG spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_config_dir() == tmp_path / "home" / ".config" / "deep-tui"


def test_the_conftest_gives_every_test_an_empty_config_home() -> None:
    home = user_config_dir()
    assert "config-home" in str(home) and not (home / "config.toml").exists()
    assert store().records() == {}


def test_trust_is_keyed_by_the_real_path_and_covers_the_digest(tmp_path: Path) -> None:
    root = project(tmp_path)
    link = tmp_path / "via-link"
    link.symlink_to(root)
    layer, pending = assess_project(link, [], store())
    assert layer is None and pending is not None and pending.state is TrustState.UNTRUSTED
    assert pending.config.root == root.resolve()
    store().trust(pending.record())

    trusted, pending = assess_project(root, [], store())  # the same project by another path
    assert pending is None and trusted is not None and trusted.layer is not None
    assert trusted.layer.data["tools"] == {"writes": "always"}
    record = store().lookup(link)
    assert record is not None and record.project == str(root.resolve())
    assert record.settings == {"base_url": '"http://127.0.0.1:9/v1"', "tools.writes": '"always"'}

    (root / ".deep-tui" / "config.toml").write_text("model = \"openai-chat:x\"\n" + CONFIG, encoding="utf-8")
    layer, pending = assess_project(root, [], store())  # a `git pull` changed it: asked again
    assert layer is None and pending is not None and pending.state is TrustState.CHANGED
    marked = {change.key: change.since_trust for change in pending.changes}
    assert marked == {"model": True, "base_url": False, "tools.writes": False}


def test_revoke_forgets_and_the_store_is_json_in_the_users_config_dir(tmp_path: Path) -> None:
    first, second = project(tmp_path, name="a"), project(tmp_path, name="b")
    for root in (first, second):
        _, pending = assess_project(root, [], store())
        assert pending is not None
        store().trust(pending.record())
    document = json.loads(trust_store_file().read_text(encoding="utf-8"))
    assert document["version"] == 1 and sorted(document["projects"]) == sorted([str(first), str(second)])
    removed = store().revoke(first)
    assert removed is not None and removed.project == str(first)
    assert store().revoke(first) is None
    assert list(store().records()) == [str(second)]
    assert assess_project(first, [], store())[1] is not None
    assert [p.name for p in trust_store_file().parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_linked_or_corrupt_store_is_refused_and_never_overwritten(tmp_path: Path) -> None:
    root = project(tmp_path)
    _, pending = assess_project(root, [], store())
    assert pending is not None
    target = tmp_path / "elsewhere.json"
    target.write_text('{"version": 1, "projects": {}}', encoding="utf-8")
    trust_store_file().parent.mkdir(parents=True)
    trust_store_file().symlink_to(target)
    with pytest.raises(TrustStoreError, match="symbolic link"):
        store().trust(pending.record())
    assert target.read_text(encoding="utf-8") == '{"version": 1, "projects": {}}'
    trust_store_file().unlink()

    trust_store_file().write_text("{not json", encoding="utf-8")
    with pytest.raises(TrustStoreError, match="not valid JSON"):
        store().trust(pending.record())
    assert trust_store_file().read_text(encoding="utf-8") == "{not json"
    layer, pending = assess_project(root, [], store())  # while it is unreadable, nothing is trusted
    assert layer is None and pending is not None and pending.store_error is not None
    assert "trust store" in pending.ignored_line()

    trust_store_file().write_text('{"version": 1, "projects": {"/x": {"digest": 5}}}', encoding="utf-8")
    with pytest.raises(TrustStoreError, match="format"):
        store().records()


def test_a_project_config_is_never_read_through_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text('base_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    root = tmp_path / "clone"
    (root / ".deep-tui").mkdir(parents=True)
    (root / ".deep-tui" / "config.toml").symlink_to(secret)
    config = read_project_config(root)
    assert config is not None and config.layer is None and "symbolic link" in (config.error or "")

    other = tmp_path / "other"
    other.mkdir()
    (tmp_path / "real-data").mkdir()
    (tmp_path / "real-data" / "config.toml").write_text(CONFIG, encoding="utf-8")
    (other / ".deep-tui").symlink_to(tmp_path / "real-data")
    config = read_project_config(other)
    assert config is not None and config.layer is None and ".deep-tui is a symbolic link" in (config.error or "")
    _, pending = assess_project(other, [], store())
    assert pending is not None and not pending.trustable


def test_no_project_config_means_nothing_to_decide(tmp_path: Path) -> None:
    (tmp_path / "empty" / ".deep-tui").mkdir(parents=True)
    assert read_project_config(tmp_path / "empty") is None
    assert assess_project(tmp_path / "empty", [], store()) == (None, None)
    os.mkfifo(tmp_path / "empty" / ".deep-tui" / "config.toml")  # a FIFO must not block the launch
    config = read_project_config(tmp_path / "empty")
    assert config is not None and "not a regular file" in (config.error or "")


@pytest.mark.parametrize(("text", "error"), [
    ("[tools]\nwrites = \"sometimes\"\n", "tools.writes"),
    ("bogus = 1\n", "unknown key bogus"),
    ("not toml at all", "invalid config file"),
    ("x" * 1_000_001, "larger than"),
])
def test_a_bad_project_config_cannot_be_trusted(tmp_path: Path, text: str, error: str) -> None:
    _, pending = assess_project(project(tmp_path, text), [], store())
    assert pending is not None and not pending.trustable and error in (pending.error or "")
    assert "cannot be used" in pending.ignored_line()


def test_values_are_shown_as_one_escaped_line_and_cut() -> None:
    assert shown_value(None) == "(not set)"
    assert shown_value("a\x1b]0;t\x07b\nc") == '"a\\u001b]0;t\\u0007b\\nc"'
    assert shown_value("\x9b2J \u202e") == '"\N{REPLACEMENT CHARACTER}2J [U+202E]"'
    long = shown_value("h" * 5000)
    assert len(long) == SHOWN_VALUE_LIMIT and long.endswith("…")
    assert shown_value(0.85) == "0.85"


def test_changes_list_only_what_differs_from_the_users_settings() -> None:
    layer = parse_config(b'theme = "textual-dark"\n[tools]\nwrites = "never"\n', "p")
    from tui.base.config_layers import settings_from_layers

    changes = describe_changes(Settings(), settings_from_layers([layer]), None)
    assert [(c.key, c.current, c.project, c.since_trust) for c in changes] == [
        ("tools.writes", '"ask"', '"never"', False)]


def test_a_record_round_trips(tmp_path: Path) -> None:
    record = TrustRecord(str(tmp_path), "sha256:ab", "2026-11-26T09:40:00Z", {"base_url": '"x"'})
    store().trust(record)
    assert store().lookup(tmp_path) == record


def test_dangerous_changes_come_first_and_mcp_servers_read_as_their_command() -> None:
    """Issue 29 §19: what redirects the requests (and the key), lifts an approval or the sandbox, or starts a
    program is listed first, with why; a server of ``[mcp.servers]`` reads as its name and command line, never as
    a Python repr."""
    layer = parse_config(b'''model = "openai:gpt-5"
theme = "textual-light"
base_url = "https://elsewhere.example/v1"
[tools]
writes = "always"
network = true
[mcp.servers.files]
command = "npx"
args = ["-y", "@mcp/files"]
approval = "always"
''', "p")
    from tui.base.config_layers import settings_from_layers

    changes = describe_changes(Settings(), settings_from_layers([layer]), None)
    assert [(c.key, c.danger) for c in changes] == [
        ("base_url", "sends your requests and API key there"),
        ("tools.writes", "no more asking"),
        ("tools.network", "sandbox limits lifted"),
        ("mcp.servers.files", "runs a program as you"),
        ("model", ""),
        ("theme", ""),
    ]
    server = next(c for c in changes if c.key == "mcp.servers.files")
    assert server.current == "(not set)" and server.project == "npx -y @mcp/files  (approval: always)"
    assert not any("McpServerConfig" in c.project for c in changes)


def test_a_changed_config_marks_only_what_really_changed(tmp_path: Path) -> None:
    """Trusted, then one line changed: only that key is marked — not a number written ``30`` in the file and
    shown ``30.0``, nor an MCP server of config.toml (``*`` on every one of them before)."""
    text = ('base_url = "http://127.0.0.1:9/v1"\n[provider]\nread_timeout = 30\n[tools]\nwrites = "always"\n'
            '[mcp.servers.files]\ncommand = "npx"\nargs = ["-y", "@mcp/files"]\n')
    root = project(tmp_path, text)
    _, pending = assess_project(root, [], store())
    assert pending is not None
    store().trust(pending.record())
    (root / ".deep-tui" / "config.toml").write_text(text.replace("127.0.0.1:9", "127.0.0.1:10"), encoding="utf-8")
    _, pending = assess_project(root, [], store())
    assert pending is not None and pending.state is TrustState.CHANGED
    marked = {change.key: change.since_trust for change in pending.changes}
    assert marked == {"base_url": True, "tools.writes": False, "mcp.servers.files": False,
                      "provider.read_timeout": False}
