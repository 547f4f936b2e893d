"""The ``uno-mk`` command line (``python -m uno_mk_env.cli``)."""

from .app import main

__all__ = ["main"]
