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

Each message's outgoing form depends on that message alone, so a session's chain keeps them
(:class:`OutgoingCopies`): a request costs O(messages since the previous one), not O(history).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ModelResponsePart, TextPart

from tui.base.metadata_keys import SEAL_METADATA_KEY
from tui.chain.image_placeholders import request_without_images

FAILED_TURN_NOTE = "(no answer: the turn failed before a reply)"
CANCELLED_TURN_NOTE = "(no answer: the user cancelled the turn)"
EMPTY_ANSWER_NOTE = "(empty answer)"


def outgoing_messages(messages: list[ModelMessage], *, images: bool = True) -> list[ModelMessage]:
    """``messages`` as a request should carry them: the same list when nothing needs fixing, else a new list
    in which only the fixed messages are copies (the recorded messages are never changed); ``images``: whether
    the model reads images (else each goes as its placeholder)."""
    fixed: list[ModelMessage] | None = None
    for index, message in enumerate(messages):
        sent = outgoing_message(message, images=images)
        if sent is not message:
            if fixed is None:
                fixed = list(messages)
            fixed[index] = sent
    return messages if fixed is None else fixed


def outgoing_message(message: ModelMessage, *, images: bool = True) -> ModelMessage:
    """One message as a request should carry it: ``message`` itself when nothing needs fixing, else a copy."""
    if isinstance(message, ModelResponse):
        return _outgoing_response(message)
    if not images and isinstance(message, ModelRequest):
        return request_without_images(message)
    return message


class OutgoingCopies:
    """:func:`outgoing_messages` for one session's history, in O(messages since the previous call).

    Kept: the *settled* messages of the previous call (up to its last response) and their outgoing forms. The
    requests after the last response are worked out again on every call: pydantic-ai still adds to the newest
    request of the history (its run's metadata, instructions, capability and settings deltas) after the hooks
    have run, never to one a response follows; nothing changes a settled message in place (what the chain
    changes — eviction, tier 2, summaries, cuts — it replaces, as the token estimates assume too).

    Each call checks that the settled messages kept are still where they were: the last one by identity, then
    all of them with one list comparison (C speed, identity first): any message replaced, dropped or inserted
    (a compaction, a rewind, an edit, another history) starts again from the whole list. A message replaced by
    an *equal* one (dataclass equality, e.g. loaded again) keeps the outgoing form of the one it replaces,
    equal to its own.
    """

    def __init__(self) -> None:
        self._images: bool | None = None
        self._settled: list[ModelMessage] = []
        self._sent: list[ModelMessage] = []
        """The outgoing form of each settled message (the message itself or its copy)."""
        self._copies = 0
        """How many of ``_sent`` are copies (none: the history can be sent as it is)."""

    def messages(self, messages: list[ModelMessage], *, images: bool = True) -> list[ModelMessage]:
        """What :func:`outgoing_messages` returns (``messages`` itself when nothing needs fixing, else a new
        list, the caller's to keep)."""
        settled = len(messages)
        while settled and not isinstance(messages[settled - 1], ModelResponse):
            settled -= 1
        if images != self._images or not self._still_settled(messages, settled):
            self._images = images
            self._settled, self._sent, self._copies = [], [], 0
        for message in messages[len(self._settled):settled]:
            sent = outgoing_message(message, images=images)
            self._settled.append(message)
            self._sent.append(sent)
            if sent is not message:
                self._copies += 1
        tail = messages[settled:]
        sent_tail = [outgoing_message(message, images=images) for message in tail]
        if not self._copies and all(sent is message for sent, message in zip(sent_tail, tail, strict=True)):
            return messages
        return self._sent + sent_tail

    def _still_settled(self, messages: list[ModelMessage], settled: int) -> bool:
        """Whether ``messages`` begins with the settled messages kept, each the same object (or an equal one)."""
        kept = self._settled
        count = len(kept)
        if count == 0:
            return True
        if count > settled or messages[count - 1] is not kept[-1]:
            return False
        kept.extend(messages[count:])  # the same length: one comparison, no copy of the history
        try:
            return kept == messages
        finally:
            del kept[count:]


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
