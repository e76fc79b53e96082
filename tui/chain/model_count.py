"""The model's own token count as a check on the estimate, asked only where a wrong estimate would cost: when a
request comes within reach of a threshold or of the limit."""

from __future__ import annotations

import asyncio
import logging

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestContext

from tui.chain.accounting import TokenAccountant
from tui.chain.outgoing import outgoing_messages
from tui.chain.usage_sanity import unbelievable_usage

logger = logging.getLogger(__name__)

EXACT_COUNT_FROM = 0.9
"""Share of the limit from which a model's own token counter (when it has one) checks the estimate."""
EXACT_COUNT_TIMEOUT = 10.0


class ModelCountCheck:
    """Asks the model (when it can count) how many tokens a request carries; remembers a model that cannot."""

    def __init__(self, accountant: TokenAccountant) -> None:
        self.accountant = accountant
        self.unsupported = False
        """The model has no token counter (asked once); cleared when the session talks to another model."""

    async def checked(self, request_context: ModelRequestContext, working: list[ModelMessage], tokens: int, *,
                      near: float, fixed_tokens: int, window: int) -> int:
        """``tokens``, or the model's own count of the request when the estimate is within reach of ``near``
        (a threshold or the limit) and the model can count: the larger of the two is kept, and the count
        calibrates the estimate. A count that fails or is not believable (for ``window``) leaves the estimate."""
        if self.unsupported or tokens < EXACT_COUNT_FROM * near:
            return tokens
        model = request_context.model
        parameters = request_context.model_request_parameters
        try:
            # What the request will carry: pydantic-ai prepares the messages for the model after this hook
            # (e.g. Anthropic's system block explaining a summary the history opens with), so count them prepared.
            sent = model.prepare_messages(outgoing_messages(list(working)), parameters)
            usage = await asyncio.wait_for(
                model.count_tokens(sent, request_context.model_settings, parameters), timeout=EXACT_COUNT_TIMEOUT)
        except NotImplementedError:
            self.unsupported = True
            return tokens
        except (TimeoutError, OSError, ValueError, RuntimeError) as error:  # counting is a check, not a need
            logger.info("the model's token count failed (%s); using the estimate", error)
            return tokens
        except Exception as error:  # a provider SDK error: keep the estimate, say why in the log
            logger.info("the model's token count failed (%s: %s); using the estimate", type(error).__name__, error)
            return tokens
        counted = usage.input_tokens
        if (doubt := unbelievable_usage(usage, window)) is not None:
            logger.warning("ignored the model's token count: %s; using the estimate", doubt)
            return tokens
        if counted > 0:
            self.accountant.observe(self.accountant.raw(working, fixed_tokens), counted)
        return max(tokens, counted)
