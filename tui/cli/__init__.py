"""The command line: ``deep-tui`` and its subcommands (``run``, ``sessions``, ``search``, ``trust``,
``serve``), and the launch that turns flags and config into an app or a headless run.

Kept empty on purpose: ``deep-tui search`` imports only what a query needs, and importing a module of
this package must not pull in the app or the agent.
"""
