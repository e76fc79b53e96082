"""``/model`` for an open :class:`~tui.agent.session.runtime.SessionRuntime`: the chat model switched between turns,
its window and prices resolved again, the usage reported against the new window at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic_ai import Agent
from pydantic_ai.models import Model

from tui.agent.models.choice import OFFLINE_MODEL_NAME, ModelChoice, ModelConfigError
from tui.agent.models.cost import CostTracker, chat_input_rate
from tui.agent.models.provider_http import ProviderConnection
from tui.agent.models.switch import build_for_switch, summarizer_after_switch
from tui.agent.runtime_api import ModelSwitch, RuntimeInfo
from tui.base.config import Settings
from tui.chain.events import UsageEvent
from tui.chain.manager import ContextManager
from tui.store import SessionHandle


class SessionModelSwitch:
    """The ``/model`` part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named
    here)."""

    settings: Settings
    handle: SessionHandle
    agent: Agent[None, str]
    manager: ContextManager
    cost: CostTracker
    info: RuntimeInfo
    choice: ModelChoice
    last_usage: UsageEvent | None
    _busy: bool
    _connection: ProviderConnection | None
    _chat_model: Model
    _summarizer_model: Model | None
    _report_fixed_change: Callable[[], None]

    async def switch_model(self, name: str, *, model: Model | None = None) -> ModelSwitch:
        """Talk to ``name`` from the next request on (``/model``); ``model`` replaces the one built from the name
        (tests, library use). The model is built in a thread (a provider's SDK is imported then), the switch is
        made here. The window and prices are resolved again and the usage is reported at once against the new
        window; the session's session.json records the model. A bad name or a missing key raises
        :class:`~tui.agent.models.choice.ModelConfigError` and changes nothing."""
        if self._busy:
            raise ModelConfigError("a turn is running; switch the model when it has finished")
        name = name.strip()
        chat_model: Model = model if model is not None else await asyncio.to_thread(
            build_for_switch, name, self.settings, self._connection)
        if self._busy:  # a turn started while the model was being built
            raise ModelConfigError("a turn is running; switch the model when it has finished")
        summarizer = summarizer_after_switch(name, chat_model, self.settings, self._summarizer_model)
        previous = self.choice.name
        self._chat_model, self._summarizer_model = chat_model, summarizer
        self.agent.model = chat_model
        self.manager.use_model(chat_model, summarizer)
        self.cost.use_input_rate(lambda: chat_input_rate(chat_model))
        self.choice = ModelChoice(name, "command")
        self.info.model_name, self.info.offline = name, name == OFFLINE_MODEL_NAME
        self.handle.meta.model = name
        if not self.handle.read_only:
            self.handle.save_meta_or_log()
        self._report_fixed_change()
        return ModelSwitch(previous=previous, name=name, window=self.manager.window,
                           window_source=self.manager.window_source, over_window=self._over_window())

    def _over_window(self) -> bool:
        """Whether the context now measures more than the compaction threshold of the (new) window."""
        usage = self.last_usage
        return usage is not None and usage.tokens >= self.manager.budget.at(self.settings.context.compaction_threshold)
