"""A short welcome in an empty session: the gauge, F1, and how to set a model. Gone with the first prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui.app.formatting import literal
from tui.app.text_display import display_path
from tui.base.paths import user_config_file

if TYPE_CHECKING:
    from pathlib import Path

    from tui.agent.runtime_api import SessionRuntimeAPI
    from tui.base.config import Settings

__all__ = ["WelcomeBlock", "welcome_text"]


def welcome_text(*, offline: bool, model_name: str, config_file: Path, compaction: float, summary: float,
                 offline_chosen: bool = False) -> Content:
    """What a first-time user needs on an empty screen, in a few lines. ``offline_chosen``: the offline model
    is the user's choice (``--model offline``), not the stand-in for a missing one."""
    if offline:
        opening = ("You chose the offline model: a local stand-in, not an LLM. " if offline_chosen
                   else "No model is set, so the offline stand-in answers: it is not an LLM. ")
        model = Content.assemble(
            (opening, "$text-warning"),
            "Type ", ("help", "bold"), " to see what it can do. For an LLM, type ", ("/model", "bold"),
            " to choose one, or start with ", ("--model anthropic:claude-sonnet-5-5", "bold"),
            " (or openai:…, google:…), ", ("DEEP_TUI_MODEL", "bold"), ", ", ("model = \"…\"", "bold"), " in ",
            literal(display_path(config_file)), ", or set ", ("ANTHROPIC_API_KEY", "bold"), " / ",
            ("OPENAI_API_KEY", "bold"), " / ", ("GEMINI_API_KEY", "bold"), ".",
        )
    else:
        model = Content.assemble("Model: ", literal(model_name, "bold"), " (change it now with ", ("/model", "bold"),
                                 "; for every session with --model, DEEP_TUI_MODEL or config.toml).")
    return Content("\n").join([
        Content.styled("Welcome to deep-tui", "bold $accent"),
        Content.assemble(
            "The bar under the chat is the ", ("context gauge", "bold"),
            f": how full the model's context window is. At {compaction:.0%} old tool outputs are compacted, "
            f"at {summary:.0%} old turns are summarized — each summary shows as a divider here, and nothing "
            "is lost (the full history stays on disk). ", ("Ctrl+G", "bold"), " compacts now.",
        ),
        Content.assemble(("F1", "bold"), " lists every key and command, ", ("Ctrl+P", "bold"),
                         " opens the palette, ", ("/", "bold"), " completes commands, ",
                         ("↑", "bold"), " recalls earlier prompts."),
        model,
    ])


class WelcomeBlock(Static):
    """Shown in an empty session; the app removes it when the first prompt is sent."""

    DEFAULT_CSS = """
    WelcomeBlock {
        margin: 1 0;
        padding: 1 2;
        border: round $accent 50%;
        height: auto;
    }
    """

    def __init__(self, text: Content) -> None:
        super().__init__(text, id="welcome")

    @classmethod
    def for_session(cls, runtime: SessionRuntimeAPI, settings: Settings) -> WelcomeBlock:
        """The welcome for ``runtime``'s model and ``settings``' thresholds; a model goes in the user's own
        config (a project's applies only once trusted)."""
        return cls(welcome_text(offline=runtime.info.offline, offline_chosen=runtime.info.offline_chosen,
                                model_name=runtime.info.model_name,
                                config_file=user_config_file(),
                                compaction=settings.context.compaction_threshold,
                                summary=settings.context.summarize_threshold))
