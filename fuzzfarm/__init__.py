"""The fuzz farm: drives deep-tui's real context chain through thousands of simulated sessions and checks
its promises (no request over the window, at most one automatic summary per turn, nothing lost).

``python -m fuzzfarm`` (or ``make fuzz``) runs it; see :mod:`fuzzfarm.cli`.
"""
