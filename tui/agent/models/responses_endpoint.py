"""An ``openai:`` model whose server does not speak the Responses API fails once, in one line.

``openai:`` models use OpenAI's Responses API (``POST <base>/responses``). Pointed (``OPENAI_BASE_URL``)
at a server that only speaks chat completions, they went wrong in two ways:

- a server that answers ``/responses`` with a chat-completions stream (many proxies route every POST to
  chat completions): pydantic-ai reads a stream that does not open with ``response.created`` as the resumed
  stream of a *background* response (``models/openai/_responses_model.py``, ``_process_streamed_response``:
  ``initial_state = 'suspended'``), so it ends ``suspended`` with no response id, and the continuation loop
  (``models/_continuation.py``, ``MAX_GENERATION_CONTINUATIONS``) sends the same request again — 11
  identical full-price requests, then "Model response None was suspended more than the maximum of 10 times";
- a server that answers 404/405: a multi-line error page as the turn's error.

deep-tui never starts background responses, so a suspended response without an id can only mean the server
does not speak the API: :class:`CheckedResponsesModel` ends the turn after that first request with
:class:`ResponsesEndpointError`, naming the endpoint and what to use instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.settings import ModelSettings

from tui.agent.models.provider_http import ProviderFailure

OPENAI_HOST = "api.openai.com"
NOT_THERE_STATUSES = frozenset({404, 405})


class ResponsesEndpointError(ProviderFailure):
    """The server behind an ``openai:`` model does not speak the Responses API; ``str()`` says what to try."""


class CheckedResponsesModel(OpenAIResponsesModel):
    """:class:`OpenAIResponsesModel` that stops at the first sign its server speaks another API."""

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
        except ModelHTTPError as error:
            self._raise_if_not_there(error)
            raise
        self._check(response)
        return response

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: RunContext[Any] | None = None) -> AsyncIterator[StreamedResponse]:
        try:
            async with super().request_stream(messages, model_settings, model_request_parameters,
                                              run_context) as stream:
                yield stream
        except ModelHTTPError as error:
            self._raise_if_not_there(error)
            raise
        self._check(stream.get())

    def _check(self, response: ModelResponse) -> None:
        if response.state == "suspended" and not response.provider_response_id:
            raise ResponsesEndpointError(self._advice("its answer is not a Responses API stream"))

    def _raise_if_not_there(self, error: ModelHTTPError) -> None:
        if error.status_code in NOT_THERE_STATUSES and urlsplit(self.base_url).hostname != OPENAI_HOST:
            raise ResponsesEndpointError(self._advice(f"HTTP {error.status_code}")) from error

    def _advice(self, what: str) -> str:
        endpoint = self.base_url.rstrip("/") + "/responses"
        return (f"{endpoint} does not speak the OpenAI Responses API that 'openai:' models use ({what}); "
                f"for a chat-completions server use 'openai-chat:{self.model_name}', or give the server "
                "with --base-url")
