"""Model resolution order and model construction errors."""

from __future__ import annotations

import pytest
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel

from tui.agent.models.choice import ModelChoice, ModelConfigError, build_model, choose_model


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


KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")


@pytest.mark.parametrize(("name", "variable"), [("anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY"),
                                                ("openai:gpt-4.1", "OPENAI_API_KEY"),
                                                ("openai-chat:gpt-4.1", "OPENAI_API_KEY"),
                                                ("google:gemini-2.5-flash", "GOOGLE_API_KEY or GEMINI_API_KEY")])
def test_a_missing_key_names_the_variable_and_how_to_pick_another_model(
        name: str, variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22.11: deep-tui's own words, not pydantic-ai's advice to use ``Agent('test')``."""
    for key in KEY_VARIABLES:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(ModelConfigError) as error:
        build_model(name)
    message = str(error.value)
    assert f"set {variable} in the environment" in message
    assert "--model" in message and "offline" in message
    assert "Agent(" not in message and "Pydantic AI" not in message


def test_the_legacy_gemini_key_is_enough_for_google(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    assert build_model("google:gemini-2.5-flash").model_name == "gemini-2.5-flash"


def test_another_providers_missing_key_is_said_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai.exceptions import UserError

    def missing(name: str, **_: object) -> None:
        raise UserError("Set the `GROQ_API_KEY` environment variable or pass it via `GroqProvider(api_key=...)` to use "
                        "the Groq provider. To try Pydantic AI without an API key, use the built-in test model: "
                        "`Agent('test')`. See https://pydantic.dev/docs/ai/guides/testing/")

    monkeypatch.setattr("tui.agent.models.choice.infer_model", missing)
    with pytest.raises(ModelConfigError) as error:
        build_model("groq:llama-3.3-70b")
    assert "set GROQ_API_KEY in the environment" in str(error.value) and "Agent(" not in str(error.value)


def test_pydantic_ais_advice_to_its_developers_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai.exceptions import UserError

    def refused(name: str, **_: object) -> None:
        raise UserError("The provider refused. To try Pydantic AI without an API key, use the built-in test model: "
                        "`Agent('test')`.")

    monkeypatch.setattr("tui.agent.models.choice.infer_model", refused)
    with pytest.raises(ModelConfigError) as error:
        build_model("groq:llama-3.3-70b")
    assert str(error.value) == "cannot use model 'groq:llama-3.3-70b': The provider refused."
