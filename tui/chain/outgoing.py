"""The history as it is sent: what a provider would refuse or should not read is fixed on the way out.

messages.json keeps every message as it was received; each request carries a copy with:

- **no whitespace-only text.** A Claude answer whose text next to a tool call is only ``"\\n\\n"`` is
  recorded as such, and Anthropic refuses a request carrying it (HTTP 400 "text content blocks must contain
  non-whitespace text") — every later turn of the session would fail. Such a text part is left out; a
  response left with nothing says so in a few words.
- **a neutral line for a failed turn.** The note deep-tui records when a turn ended without an answer
  (``(no answer: <why>)``, see :mod:`tui.agent.session.history_seal`) quotes the provider's error for the user to
  read; the model is sent only :data:`FAILED_TURN_NOTE` (or :data:`CANCELLED_TURN_NOTE`), never an error body.

- **no image for a model that reads none.** A session that switched to such a model with ``/model`` still holds
  the images attached before: each is sent as its one-line placeholder (:mod:`tui.chain.image_placeholders`).

Fixing the copy, not the record, heals sessions recorded before this existed as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart

from tui.base.metadata_keys import SEAL_METADATA_KEY
from tui.chain.image_placeholders import without_images

FAILED_TURN_NOTE = "(no answer: the turn failed before a reply)"
CANCELLED_TURN_NOTE = "(no answer: the user cancelled the turn)"
EMPTY_ANSWER_NOTE = "(empty answer)"


def outgoing_messages(messages: list[ModelMessage], *, images: bool = True) -> list[ModelMessage]:
    """``messages`` as a request should carry them: the same list when nothing needs fixing, else a new list
    in which only the fixed messages are copies (the recorded messages are never changed); ``images``: whether
    the model reads images (else each goes as its placeholder)."""
    if not images:
        messages = without_images(messages)
    fixed: list[ModelMessage] | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, ModelResponse):
            continue
        sent = _outgoing_response(message)
        if sent is not message:
            if fixed is None:
                fixed = list(messages)
            fixed[index] = sent
    return messages if fixed is None else fixed


def _outgoing_response(message: ModelResponse) -> ModelResponse:
    seal = message.metadata.get(SEAL_METADATA_KEY) if isinstance(message.metadata, dict) else None
    if isinstance(seal, dict):
        note = CANCELLED_TURN_NOTE if seal.get("reason") == "cancelled" else FAILED_TURN_NOTE
        if all(part.content == note for part in message.parts if isinstance(part, TextPart)):
            return message
        parts: Sequence[ModelResponsePart] = [
            replace(part, content=note) if isinstance(part, TextPart) else part for part in message.parts]
        return replace(message, parts=list(parts))
    if not any(isinstance(part, TextPart) and part.content and not part.content.strip() for part in message.parts):
        return message
    kept = [part for part in message.parts
            if not (isinstance(part, TextPart) and part.content and not part.content.strip())]
    if not kept:
        kept = [TextPart(EMPTY_ANSWER_NOTE)]
    return replace(message, parts=kept)
