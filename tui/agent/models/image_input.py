"""Whether the model in use reads images: an ``@shot.png`` goes to it as image content only then.

A model reads images when deep-tui knows its family's rule for counting image tokens
(:func:`tui.chain.image_tokens.known_image_rule`: OpenAI's vision models, Claude, Gemini) and its pydantic-ai
profile does not say it takes none (``supports_image_input``). The offline model and any model deep-tui does not
know (a local model behind ``--base-url``, say) count as not reading images: they are told in text that there was
one, rather than sent bytes a provider may refuse and fail the turn over.
"""

from __future__ import annotations

from pydantic_ai.models import Model

from tui.chain.image_tokens import known_image_rule
from tui.chain.request_facts import model_key


def takes_images(model: Model | None) -> bool:
    """Whether ``model`` is sent an attached image as image content."""
    if model is None or known_image_rule(model_key(model)) is None:
        return False
    return bool(model.profile.get("supports_image_input", True))
