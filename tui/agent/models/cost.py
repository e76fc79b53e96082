"""What each model request, turn, session and compaction costs, priced with genai-prices.

A response is priced from the usage the provider reported, split into input, cached input
(prompt-cache reads and writes) and output. A model genai-prices does not know is "price
unknown" — counted apart, never as $0. The offline stand-in model is free. The session's
totals are kept in session.json (``SessionHandle.record_cost``); each priced request emits
:class:`~tui.agent.models.cost_events.CostUpdated` to the session's subscribers.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from genai_prices import calc_price
from genai_prices.types import PriceCalculation
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.usage import RequestUsage

from tui.agent.models.choice import OFFLINE_MODEL_NAME
from tui.agent.models.cost_events import CostUpdated
from tui.chain.events import CompactionFailed, CompactionFinished
from tui.chain.summarizer import Summarizer
from tui.chain.usage_sanity import unbelievable_usage
from tui.store.cost_totals import CostTotals

logger = logging.getLogger(__name__)

_CACHE_FIELDS = ("cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_audio_read_tokens")


@dataclass(frozen=True)
class RequestCost:
    """One request's price in USD."""

    input_usd: float
    cached_input_usd: float
    output_usd: float

    @property
    def total_usd(self) -> float:
        return self.input_usd + self.cached_input_usd + self.output_usd


FREE = RequestCost(0.0, 0.0, 0.0)


def _calc(usage: RequestUsage, model_name: str, *, provider_name: str | None, provider_url: str | None,
          timestamp: datetime | None) -> PriceCalculation | None:
    """genai-prices by the provider's URL, then its name (never by model name alone: a local server's
    ``llama3`` must not be priced as some cloud provider's)."""
    for provider_id, api_url in ((None, provider_url), (provider_name, None)):
        if not (provider_id or api_url):
            continue
        try:
            if api_url:
                return calc_price(usage, model_name, provider_api_url=api_url, genai_request_timestamp=timestamp)
            return calc_price(usage, model_name, provider_id=provider_id, genai_request_timestamp=timestamp)
        except LookupError:
            continue
        except (ValueError, TypeError, ArithmeticError) as error:  # bad data in a snapshot: unknown, not a crash
            logger.warning("genai-prices could not price %s: %s", model_name, error)
            return None
    return None


def price_usage(usage: RequestUsage, model_name: str | None, *, provider_name: str | None = None,
                provider_url: str | None = None, timestamp: datetime | None = None) -> RequestCost | None:
    """The price of one request's usage; ``None`` when it cannot be priced."""
    if not model_name:
        return None
    if model_name == OFFLINE_MODEL_NAME and provider_name in (None, "function"):
        return FREE
    if usage.unmeasured_requests:
        return None
    full = _calc(usage, model_name, provider_name=provider_name, provider_url=provider_url, timestamp=timestamp)
    if full is None:
        return None
    cached_tokens = sum(int(getattr(usage, name, 0) or 0) for name in _CACHE_FIELDS)
    if not cached_tokens or not usage.input_tokens:
        return RequestCost(float(full.input_price), 0.0, float(full.output_price))
    # Uncached input at the plain rate (same input total, so the same price tier); the rest of the
    # input price is what the cached tokens cost.
    zeroed: dict[str, Any] = {name: 0 for name in _CACHE_FIELDS if hasattr(usage, name)}
    plain_usage = dataclasses.replace(usage, **zeroed)
    plain = _calc(plain_usage, model_name, provider_name=provider_name, provider_url=provider_url, timestamp=timestamp)
    if plain is None:
        return None
    uncached_share = max(0, usage.input_tokens - cached_tokens) / usage.input_tokens
    uncached = float(plain.input_price) * uncached_share
    return RequestCost(uncached, max(0.0, float(full.input_price) - uncached), float(full.output_price))


def price_response(response: ModelResponse) -> RequestCost | None:
    """The price of one response, ``None`` when it cannot be priced — or its usage is beyond reason
    (:mod:`tui.chain.usage_sanity`): a provider's 10^12 tokens must not become a $10,000,000 session."""
    if (doubt := unbelievable_usage(response.usage)) is not None:
        logger.info("ignored a usage figure from %s: %s; this request is not priced", response.provider_name, doubt)
        return None
    return price_usage(response.usage, response.model_name, provider_name=response.provider_name,
                       provider_url=response.provider_url, timestamp=response.timestamp)


def input_price_per_token(model_name: str, *, provider_name: str | None, provider_url: str | None) -> float | None:
    """USD per uncached input token of the chat model (for "saves per later request")."""
    cost = price_usage(RequestUsage(input_tokens=1_000_000), model_name, provider_name=provider_name,
                       provider_url=provider_url)
    return None if cost is None else cost.input_usd / 1_000_000


class CostTracker:
    """One session's running cost: per request, per turn, per session, and per compaction."""

    def __init__(self, initial: CostTotals | None, *, had_history: bool, emit: Callable[[CostUpdated], None],
                 persist: Callable[[CostTotals], None], input_rate: Callable[[], float | None]) -> None:
        """``had_history``: the session has messages recorded before cost tracking (then the totals are a
        lower bound). ``input_rate``: the chat model's price per input token, looked up on first use."""
        self.session = initial.copy() if initial is not None else CostTotals(since=time.time() if had_history else None)
        self.turn = CostTotals()
        self.last_request_usd: float | None = None
        self._emit = emit
        self._persist = persist
        self._input_rate = input_rate
        self._rate: tuple[float | None] | None = None

    def begin_turn(self) -> None:
        self.turn = CostTotals()

    def add_response(self, response: ModelResponse, *, summarizer: bool = False) -> RequestCost | None:
        """Count one response; persists the session totals and emits :class:`CostUpdated`."""
        cost = price_response(response)
        for totals in (self.session, self.turn):
            if cost is None:
                totals.add_unpriced()
            else:
                totals.add(input_usd=cost.input_usd, cached_input_usd=cost.cached_input_usd,
                           output_usd=cost.output_usd, summarizer=summarizer)
        self.last_request_usd = None if cost is None else cost.total_usd
        self._persist(self.session.copy())
        self._emit(CostUpdated(session=self.session.copy(), turn=self.turn.copy(),
                               last_request_usd=self.last_request_usd, summarizer=summarizer))
        return cost

    def compaction_cost(self, responses: Iterable[ModelResponse]) -> tuple[float | None, int]:
        """Count the summarizer's responses for one compaction: (their cost or ``None`` if any is not
        priced, how many requests)."""
        total: float | None = 0.0
        count = 0
        for response in responses:
            count += 1
            cost = self.add_response(response, summarizer=True)
            total = None if cost is None or total is None else total + cost.total_usd
        return total, count

    def use_input_rate(self, input_rate: Callable[[], float | None]) -> None:
        """Price input tokens with ``input_rate`` from now on (the session switched its model)."""
        self._input_rate = input_rate
        self._rate = None

    def input_rate(self) -> float | None:
        if self._rate is None:
            self._rate = (self._input_rate(),)
        return self._rate[0]

    def savings_per_request(self, tokens_saved: int) -> float | None:
        rate = self.input_rate()
        return None if rate is None else tokens_saved * rate


def chat_input_rate(chat_model: Model) -> float | None:
    """The chat model's price per uncached input token (0 for the offline model; ``None``: unknown)."""
    try:
        base_url = chat_model.base_url
    except (AttributeError, UserError):  # some providers have no URL until a client exists
        base_url = None
    return input_price_per_token(chat_model.model_name, provider_name=chat_model.system, provider_url=base_url)


CompactionEvent = TypeVar("CompactionEvent", bound=CompactionFinished | CompactionFailed)


def price_compaction(event: CompactionEvent, tracker: CostTracker, summarizer: Summarizer) -> CompactionEvent:
    """``event`` with what the summarizer's requests for it cost (they are counted in the session's cost
    too) and, for a finished one, roughly what it saves on each later request."""
    responses, summarizer.responses = summarizer.responses, []
    cost, requests = tracker.compaction_cost(responses)
    if isinstance(event, CompactionFailed):
        return dataclasses.replace(event, priced=True, cost_usd=cost, cost_requests=requests)
    saves = tracker.savings_per_request(event.tokens_saved) if event.tokens_saved else None
    return dataclasses.replace(event, priced=True, cost_usd=cost, cost_requests=requests,
                               saves_usd_per_request=saves)


@dataclass
class CostCapability(AbstractCapability[Any]):
    """Prices every chat model response as it arrives (streamed or not)."""

    tracker: CostTracker

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: ModelRequestContext,
                                  response: ModelResponse) -> ModelResponse:
        self.tracker.add_response(response)
        return response
