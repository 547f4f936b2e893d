"""``python -m uno_mk_env.cli``: the ``uno-mk`` command."""

from .app import main

raise SystemExit(main())
