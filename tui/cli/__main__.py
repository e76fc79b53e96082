"""``python -m tui.cli``: the same as the ``deep-tui`` script."""

from tui.cli.main import main

raise SystemExit(main())
