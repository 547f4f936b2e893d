"""``uno-mk agents``: the registered agents (works on a base install); ``--verbose`` also names
the agent modules that could not be imported (an optional extra missing, say), which are
otherwise not mentioned."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from uno_mk_env.agents import registered
from uno_mk_env.agents.base import discover_agents

from .common import print_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("agents", help="list the registered agents",
                              description="List the registered agents and their specs.")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also name the agent modules that could not be imported, and why")


def run(args: argparse.Namespace, out: TextIO) -> int:
    failures = discover_agents()
    rows = [(name, text) for name, text in sorted(registered().items())]
    print_table(out, "registered agents (spec: name or name:argument)", ("name", "description"),
                rows)
    if args.verbose:
        for module, reason in failures.items():
            print(f"note: {module} could not be imported ({reason})", file=out)
        if not failures:
            print("note: every agent module was imported", file=out)
    return 0
