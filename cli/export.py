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
from .train import run_training_module


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export", add_help=False, allow_abbrev=False,
        help="ship a training checkpoint as a model file (+ .npz, provenance, evaluation)",
        description="The arguments of python -m uno_mk_env.training.export_model "
                    "('uno-mk export --help' lists them).")
    p.set_defaults(extra_args=[])  # export_model's own arguments (see cli/app.py)


def run(args: argparse.Namespace, out: TextIO) -> int:
    return run_training_module("export_model", args.extra_args, f"{COMMAND} export")
