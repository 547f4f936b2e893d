"""``uno-mk rules``: the rule options with their defaults, and the presets (works on a base
install)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from uno_mk_env import PRESETS
from uno_mk_env.engine.rules import OPTIONS

from .common import print_table


def add_parser(subparsers: Any) -> None:
    subparsers.add_parser(
        "rules", help="list the rule options with their defaults, and the presets",
        description="List the rule options (--rule KEY=VALUE) and the presets (--preset NAME).")


def run(args: argparse.Namespace, out: TextIO) -> int:
    rows = [(name, str(spec.default), spec.allowed.replace("`", "").replace('"', ""),
             spec.doc.replace("`", "")) for name, spec in OPTIONS.items()]
    print_table(out, "rule options (--rule KEY=VALUE)", ("option", "default", "allowed",
                                                         "meaning"), rows,
                wrap=("allowed", "meaning"))
    presets = [(name, ", ".join(f"{k}={v!r}" for k, v in opts.items()) or "(all defaults)")
               for name, opts in PRESETS.items()]
    print_table(out, "presets (--preset NAME)", ("preset", "options"), presets,
                wrap=("options",))
    return 0
