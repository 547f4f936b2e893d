"""``uno-mk ladder``: a persistent ladder of agents in one folder
(:mod:`uno_mk_env.evaluation.ladder`).

::

    uno-mk ladder add strategic                 # the first entrant plays nobody
    uno-mk ladder add ppo:ppo_2p --bound 0.4    # plays the others until its interval < 0.4
    uno-mk ladder add oracle --allow-cheating   # a reference, marked as cheating
    uno-mk ladder show

The folder (``--dir``, default ``results/ladder``) is locked for a run; every file in it is
written atomically, the ladder is saved after every match and the match being played is
journaled, so a killed ``ladder add`` run again with the same arguments finishes the entrant,
ending as an uninterrupted run would.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.evaluation import ladder
from uno_mk_env.evaluation.tournament import BACKENDS, MAX_WORKERS

from .common import CLIError, print_table, require

DEFAULT_DIR = Path("results") / "ladder"


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("ladder", help="a persistent ladder of agents (add, show)",
                              description="A persistent ladder: each new agent plays duplicate "
                                          "matches against the others until its rating is "
                                          "known well enough (needs the 'eval' extra).")
    sub = p.add_subparsers(dest="ladder_command", required=True)
    add = sub.add_parser("add", help="add an agent and play its matches")
    add.add_argument("spec", help="the agent spec to add (see 'uno-mk agents')")
    add.add_argument("--bound", type=float, default=0.5,
                     help="stop once the 95%% interval of its rating is narrower than this "
                          "(log-strength units; default 0.5)")
    add.add_argument("--batch", type=int, default=100,
                     help="games per match, one match per entrant per round (default 100)")
    add.add_argument("--max-games", type=int, default=2000,
                     help="stop after the round in which the new agent's games reach this "
                          "(default 2000)")
    add.add_argument("--seed", type=int,
                     help="the ladder's root seed, set by its first entrant (default 0)")
    add.add_argument("--workers", type=int, default=1, help=f"1 to {MAX_WORKERS} (default 1)")
    add.add_argument("--backend", choices=BACKENDS, default="local",
                     help="local processes (default) or a Ray cluster")
    add.add_argument("--address", help="the Ray cluster with --backend ray")
    add.add_argument("--allow-cheating", action="store_true",
                     help="admit an agent that sees hidden cards, as a marked reference")
    show = sub.add_parser("show", help="print the ladder's table")
    for q in (add, show):
        q.add_argument("--dir", default=str(DEFAULT_DIR),
                       help=f"the ladder's folder (default {DEFAULT_DIR})")


def run(args: argparse.Namespace, out: TextIO) -> int:
    require(("scipy",), "eval", "uno-mk ladder")
    folder = Path(args.dir)
    if args.ladder_command == "show":
        if not (folder / ladder.LADDER_FILE).exists():
            raise CLIError(f"no ladder in {str(folder)!r}: start one with 'uno-mk ladder add "
                           "SPEC --dir ...'")
        print_standings(folder, out)
        return 0
    if not 1 <= args.workers <= MAX_WORKERS:
        raise CLIError(f"--workers must be 1 to {MAX_WORKERS}, got {args.workers}")
    if args.address and args.backend != "ray":
        raise CLIError("--address names a Ray cluster: give it with --backend ray")
    row = ladder.add_entrant(
        folder, args.spec, seed=args.seed, bound=args.bound, batch=args.batch,
        max_games=args.max_games, allow_cheating=args.allow_cheating, workers=args.workers,
        backend=args.backend, address=args.address,
        on_round=lambda games, width: print(
            f"{args.spec}: {games:,} games, rating interval {width:.2f} wide", file=out,
            flush=True))
    print(f"added {args.spec}: rating {row['rating']:+.2f} after {row['games']:,} games",
          file=out)
    print_standings(folder, out)
    return 0


def print_standings(folder: Path, out: TextIO) -> None:
    """The ladder's table (best rating first), cheating references marked."""
    rows = ladder.standings(folder)
    cells = [[str(i), r["agent"] + (" (cheats: reference)" if r["cheats"] else ""),
              _rating(r), f"{r['games']:,}"] for i, r in enumerate(rows, 1)]
    print_table(out, f"ladder {folder}: Bradley-Terry ratings (log-strength, mean 0) with 95% "
                "intervals", ["#", "agent", "rating [95% CI]", "games"], cells,
                right=["#", "rating [95% CI]", "games"])


def _rating(row: dict[str, Any]) -> str:
    lo, hi = row["rating_ci_low"], row["rating_ci_high"]
    if lo == float("-inf"):
        return f"{row['rating']:+.2f} [no games yet]"
    return f"{row['rating']:+.2f} [{lo:+.2f}, {hi:+.2f}]"
