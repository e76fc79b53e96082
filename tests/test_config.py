"""config.toml parsing and validation: defaults, overrides, and one clear error per bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.base.config import ConfigError, ContextSettings, Settings
from tui.base.config_layers import load_settings
from tui.base.paths import DataDir


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_optional_file_gives_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "nope.toml", required=False)
    assert settings == Settings()
    assert settings.context.large_result_tokens == 20_000
    assert settings.context.compaction_threshold == 0.85
    assert settings.context.summarize_threshold == 0.90
    assert settings.context.keep_recent_fraction == 0.20


def test_missing_required_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml", required=True)


def test_full_file_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, """
model = "openai-chat:llama3"
summarization_model = "openai-chat:tiny"
base_url = "http://127.0.0.1:9/v1"
[context]
window = 32000
large_result_tokens = 5000
compaction_threshold = 0.8
summarize_threshold = 0.9
keep_recent_fraction = 0.25
""")
    settings = load_settings(path, required=True)
    assert settings.model == "openai-chat:llama3"
    assert settings.summarization_model == "openai-chat:tiny"
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.context == ContextSettings(window=32000, large_result_tokens=5000, compaction_threshold=0.8,
                                               summarize_threshold=0.9, keep_recent_fraction=0.25)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[context]\nsummarize_threshold = 1.5", "context.summarize_threshold"),
        ("[context]\ncompaction_threshold = 0.0", "context.compaction_threshold"),
        ("[context]\nkeep_recent_fraction = 0.9", "context.keep_recent_fraction"),
        ("[context]\nlarge_result_tokens = 5", "context.large_result_tokens"),
        ("[context]\nwindow = 10", "context.window"),
        ("[context]\nwindow = \"big\"", "context.window"),
        ("[context]\ncompaction_threshold = 0.95\nsummarize_threshold = 0.9", "context.compaction_threshold"),
        ("[context]\nbogus = 1", "context.bogus"),
        ("modle = \"x\"", "modle"),
        ("model = 3", "model"),
        ("agent_name = \"../evil\"", "agent_name"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(write(tmp_path, text), required=True)
    assert key in str(error.value)
    assert "\n" not in str(error.value)


def test_invalid_toml_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="invalid config file"):
        load_settings(write(tmp_path, "model = [unclosed"), required=True)


def test_flags_override_file_and_are_validated(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "[context]\nwindow = 50000"), required=True)
    overridden = settings.with_overrides(window=8000, base_url=None, summarization_model="x:y")
    assert overridden.context.window == 8000
    assert overridden.summarization_model == "x:y"
    assert overridden.base_url is None
    with pytest.raises(ConfigError, match=r"context\.window"):
        settings.with_overrides(window=5)


def test_data_dir_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DataDir.resolve(None, cwd=tmp_path).root == (tmp_path / ".deep-tui").resolve()
    monkeypatch.setenv("DEEP_TUI_HOME", str(tmp_path / "env-home"))
    assert DataDir.resolve(None, cwd=tmp_path).root == (tmp_path / "env-home").resolve()
    assert DataDir.resolve(str(tmp_path / "flag"), cwd=tmp_path).root == (tmp_path / "flag").resolve()
    data = DataDir(tmp_path)
    assert data.memory_file("main") == tmp_path / "main" / "MEMORY.md"
    assert data.session_dir("abc") == tmp_path / "sessions" / "abc"


def test_tools_writes_policy_is_read_validated_and_overridden_by_flags(tmp_path: Path) -> None:
    assert Settings().tools.writes == "ask"
    path = tmp_path / "config.toml"
    path.write_text('[tools]\nwrites = "always"\n')
    settings = load_settings(path, required=True)
    assert settings.tools.writes == "always"
    assert settings.with_overrides(writes="never").tools.writes == "never"
    assert settings.with_overrides(writes=None).tools.writes == "always"
    for text, message in (('[tools]\nwrites = "sometimes"\n', "tools.writes must be one of ask, always, never"),
                          ("[tools]\nwrites = true\n", "tools.writes must be a string"),
                          ('[tools]\nreads = "ask"\n', "unknown key tools.reads"),
                          ('tools = "ask"\n', r"\[tools\] must be a table")):
        path.write_text(text)
        with pytest.raises(ConfigError, match=message):
            load_settings(path, required=True)


def test_the_rewind_table() -> None:
    from tui.base.config import ConfigError, RewindSettings, settings_from_mapping

    assert settings_from_mapping({}).rewind == RewindSettings()
    settings = settings_from_mapping({"rewind": {"enabled": False, "max_file_mb": 2, "timeout": 1}})
    assert settings.rewind == RewindSettings(enabled=False, max_file_mb=2.0, timeout=1.0)
    for bad, words in (({"enabled": "no"}, "rewind.enabled must be true or false"),
                       ({"timeout": 0}, "rewind.timeout must be between"),
                       ({"max_file_mb": -1}, "rewind.max_file_mb must be between"),
                       ({"size": 1}, "unknown key rewind.size")):
        try:
            settings_from_mapping({"rewind": bad}, source="cfg")
        except ConfigError as error:
            assert words in str(error) and str(error).startswith("cfg: ")
        else:
            raise AssertionError(f"{bad} was accepted")
