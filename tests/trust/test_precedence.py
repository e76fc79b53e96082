"""Where settings come from: defaults < user config < trusted project config (or --config / the data dir the
user chose) < environment < flags, resolved the way the command line resolves them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.agent.models.choice import choose_model
from tui.base.errors import UserFacingError
from tui.base.paths import trust_store_file, user_config_file
from tui.cli.launch import LaunchContext, ProjectTrustGate, resolve_context
from tui.cli.main import build_parser
from tui.trust.project import TrustChoice
from tui.trust.store import TrustStore

PROJECT = ('model = "openai-chat:project-model"\nbase_url = "http://127.0.0.1:9/v1"\n'
           '[context]\nwindow = 64000\n[tools]\nwrites = "always"\n')
USER = 'model = "openai-chat:user-model"\n[context]\ncompaction_threshold = 0.8\n[provider]\nretries = 1\n'


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository with its own config, as the working directory; the user has a config too."""
    root = tmp_path / "clone"
    (root / ".deep-tui").mkdir(parents=True)
    (root / ".deep-tui" / "config.toml").write_text(PROJECT, encoding="utf-8")
    user_config_file().parent.mkdir(parents=True)
    user_config_file().write_text(USER, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def context(*argv: str) -> LaunchContext:
    return resolve_context(build_parser().parse_args(list(argv)))


def trust(root: Path) -> None:
    pending = context().pending_project
    assert pending is not None
    TrustStore(trust_store_file()).trust(pending.record())


def test_an_untrusted_project_config_is_ignored_as_a_whole(clone: Path) -> None:
    launch = context()
    assert not launch.project_trusted and launch.pending_project is not None
    settings = launch.settings
    assert settings.model == "openai-chat:user-model" and settings.base_url is None
    assert settings.tools.writes == "ask" and settings.context.window is None
    assert settings.context.compaction_threshold == 0.8 and settings.provider.retries == 1  # the user's own


def test_a_trusted_project_config_applies_over_the_users_table_by_table(clone: Path) -> None:
    trust(clone)
    launch = context()
    assert launch.project_trusted and launch.pending_project is None
    settings = launch.settings
    assert settings.model == "openai-chat:project-model" and settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.tools.writes == "always" and settings.context.window == 64000
    assert settings.context.compaction_threshold == 0.8 and settings.provider.retries == 1  # merged, not replaced


def test_environment_and_flags_win_over_a_trusted_project(clone: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trust(clone)
    launch = context("--deny-writes", "--base-url", "http://127.0.0.1:8/v1", "--context-window", "32000")
    assert launch.settings.tools.writes == "never" and launch.settings.base_url == "http://127.0.0.1:8/v1"
    assert launch.settings.context.window == 32000
    monkeypatch.setenv("DEEP_TUI_MODEL", "openai-chat:env-model")
    assert choose_model(launch.model_flag, launch.settings.model).name == "openai-chat:env-model"
    assert choose_model("openai-chat:flag-model", launch.settings.model).name == "openai-chat:flag-model"


@pytest.mark.parametrize("how", ["--config", "--data-dir", "DEEP_TUI_HOME"])
def test_a_config_the_user_points_at_applies_without_trust(clone: Path, monkeypatch: pytest.MonkeyPatch,
                                                           how: str) -> None:
    project_data = str(clone / ".deep-tui")
    if how == "--config":
        launch = context("--config", f"{project_data}/config.toml")
    elif how == "--data-dir":
        launch = context("--data-dir", project_data)
    else:
        monkeypatch.setenv("DEEP_TUI_HOME", project_data)
        launch = context()
    assert launch.project_trusted and launch.pending_project is None
    assert launch.settings.base_url == "http://127.0.0.1:9/v1" and launch.settings.tools.writes == "always"
    assert launch.settings.provider.retries == 1  # over the user's config, which still applies


def test_the_gate_applies_the_answer_to_the_session_about_to_open(clone: Path) -> None:
    for choice, applied, recorded in [(TrustChoice.NOT_NOW, False, False), (TrustChoice.ONCE, True, False),
                                      (TrustChoice.TRUST, True, True)]:
        gate = ProjectTrustGate(context("--retries", "5"))
        settings, warning = gate.decide(choice)
        assert warning is None and gate.context.settings == settings
        assert (settings.base_url == "http://127.0.0.1:9/v1") is applied
        assert settings.provider.retries == 5  # the flag still wins
        assert gate.context.project_trusted is applied and gate.context.pending_project is None
        assert bool(TrustStore(trust_store_file()).records()) is recorded
    assert context().project_trusted


def test_a_trust_that_cannot_be_recorded_applies_once_and_says_why(clone: Path) -> None:
    gate = ProjectTrustGate(context())
    trust_store_file().parent.mkdir(parents=True, exist_ok=True)
    trust_store_file().write_text("{broken", encoding="utf-8")
    settings, warning = gate.decide(TrustChoice.TRUST)
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert warning is not None and "this session only" in warning and "not valid JSON" in warning
    assert trust_store_file().read_text(encoding="utf-8") == "{broken"


def test_a_bad_user_config_names_its_file(clone: Path) -> None:
    user_config_file().write_text("[tools]\nwrites = 3\n", encoding="utf-8")
    with pytest.raises(UserFacingError, match=r"deep-tui/config.toml: tools.writes must be a string"):
        context()


def test_thresholds_are_checked_across_files_once_trusted(clone: Path) -> None:
    (clone / ".deep-tui" / "config.toml").write_text("[context]\nsummarize_threshold = 0.7\n", encoding="utf-8")
    pending = context().pending_project  # 0.7 alone is fine; with the user's compaction_threshold 0.8 it is not
    assert pending is not None and not pending.trustable and "compaction_threshold" in (pending.error or "")
