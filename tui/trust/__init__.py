"""Project trust: a project's own config applies only once the user has trusted that project.

:mod:`tui.trust.project` reads a project's config (never through a link) and says what it would change;
:mod:`tui.trust.store` records the projects the user trusts, outside every project
(``user_config_dir()/trusted-projects.json``). Nothing here imports Textual or pydantic-ai.
"""
