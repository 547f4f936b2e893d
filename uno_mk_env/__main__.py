"""``python -m uno_mk_env``: the ``uno-mk`` command (``python -m uno_mk_env demo``)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
