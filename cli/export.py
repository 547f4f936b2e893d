"""``uno-mk export``: ship a training checkpoint as a model file with its provenance and a fresh
evaluation (:mod:`uno_mk_env.training.export_model`; needs the ``train`` extra).

::

    uno-mk export runs/<run>/checkpoints/ppo_10000000_steps.zip models/ppo_4p.zip \\
        --games 10000 40000 --seed 2026 --opponents strategic,greedy
    uno-mk export --help
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from .common import PROG as COMMAND
from .common import require
from .train import SB3_NEEDS, _exit_code


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export", add_help=False, allow_abbrev=False,
        help="ship a training checkpoint as a model file (+ .npz, provenance, evaluation)",
        description="The arguments of python -m uno_mk_env.training.export_model "
                    "('uno-mk export --help' lists them).")
    p.set_defaults(extra_args=[])  # export_model's own arguments (see cli/app.py)


def run(args: argparse.Namespace, out: TextIO) -> int:
    argv = list(args.extra_args)
    if not any(a in ("-h", "--help") for a in argv):
        require(SB3_NEEDS, "train", "uno-mk export (install torch==2.13.0 first)")
    from uno_mk_env.training import export_model

    return _exit_code(export_model.main, argv, f"{COMMAND} export")
