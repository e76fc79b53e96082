"""How long a server may take to start: its ``timeout``, stretched on a loaded machine.

A server's ``timeout`` (10 s by default) is what it needs on an idle machine. Under load — a build, a test
suite, a second deep-tui on a 2-core laptop — a Python or Node server's own imports alone can take longer, and
a server that would have started is given up on. So the budget is the ``timeout`` times the machine's
slow-down, read from the 1-minute load average per core: at least 1, at most :data:`MAX_STRETCH`.
"""

from __future__ import annotations

import os

MAX_STRETCH = 4.0
"""The most a timeout is stretched (a load of 8 or more on a 2-core machine)."""


def load_stretch(load: float | None = None, cores: int | None = None) -> float:
    """The 1-minute load average per core, between 1 and :data:`MAX_STRETCH` (1 where the system has none)."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # Windows, or no /proc/loadavg
            return 1.0
    cores = cores or os.cpu_count() or 1
    return min(MAX_STRETCH, max(1.0, load / cores))


def handshake_budget(timeout: float, stretch: float) -> float:
    """The seconds a server has to start and answer the handshake."""
    return timeout * max(1.0, stretch)


def budget_words(timeout: float, budget: float) -> str:
    """``10 s``, or ``25 s (10 s, stretched for the machine's load)``."""
    if budget <= timeout:
        return f"{timeout:g} s"
    return f"{budget:.3g} s ({timeout:g} s, stretched for the machine's load)"
