"""Model resolution order and model construction errors."""

from __future__ import annotations

import pytest
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel

from tui.agent.models import ModelChoice, ModelConfigError, build_model, choose_model


def test_flag_wins_over_everything() -> None:
    env = {"DEEP_TUI_MODEL": "env:model", "ANTHROPIC_API_KEY": "k"}
    assert choose_model("flag:model", "config:model", env) == ModelChoice("flag:model", "flag")


def test_env_wins_over_config() -> None:
    assert choose_model(None, "config:model", {"DEEP_TUI_MODEL": "env:model"}) == ModelChoice("env:model", "env")


def test_config_wins_over_keys() -> None:
    assert choose_model(None, "config:model", {"OPENAI_API_KEY": "k"}) == ModelChoice("config:model", "config")


@pytest.mark.parametrize(
    ("env", "prefix"),
    [
        ({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, "anthropic:"),
        ({"OPENAI_API_KEY": "o", "GOOGLE_API_KEY": "g"}, "openai:"),
        ({"GEMINI_API_KEY": "g"}, "google:"),
        ({"GOOGLE_API_KEY": "g"}, "google:"),
    ],
)
def test_first_provider_with_a_key(env: dict[str, str], prefix: str) -> None:
    choice = choose_model(None, None, env)
    assert choice.source == "api-key"
    assert choice.name.startswith(prefix)


def test_offline_when_nothing_is_set() -> None:
    choice = choose_model(None, None, {})
    assert choice == ModelChoice("offline", "offline")
    assert choice.offline


def test_offline_model_is_a_function_model() -> None:
    assert isinstance(build_model("offline"), FunctionModel)


def test_base_url_makes_openai_models_speak_chat_completions() -> None:
    model = build_model("openai:gpt-4.1", base_url="http://127.0.0.1:1/v1")
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == "gpt-4.1"


@pytest.mark.parametrize("name", ["nocolon", "nosuchprovider:model", "anthropic:claude-sonnet-5-5"])
def test_unusable_models_raise_one_clear_error(name: str) -> None:
    with pytest.raises(ModelConfigError) as error:
        build_model(name)
    assert name in str(error.value)
