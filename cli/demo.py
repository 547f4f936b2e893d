"""``uno-mk demo``, the main demo: the shipped 4-player PPO agent against the baselines, at one
4-player table.

::

    uno-mk demo                    # ~1 minute on a 2-core machine (16,000 games)
    uno-mk demo --games 2000       # quicker
    python -m uno_mk_env.cli.demo  # the same

Plays a duplicate-deal tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`: every deal is replayed once per seat
rotation) between ``random``, ``greedy``, ``strategic`` and ``ppo:ppo_4p`` (the 4-player policy
shipped with the package, :mod:`uno_mk_env.agents.shipped`, played with numpy alone, so the demo
works from any directory and without torch), and prints the leaderboard with 95 % confidence
intervals. The progress bar is drawn when stderr is a terminal; in a log (``make demo > log``)
the output is plain lines. ``--model`` plays another policy (a shipped name or a model file);
a model that cannot be loaded ends the demo before any game with one line saying why, never a
demo without it. Needs the ``eval`` extra.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .common import CLIError, check_agents, require

#: The shipped 4-player policy (``uno-mk models``; its command in ``models/ppo_4p.json``).
DEFAULT_MODEL = "ppo_4p"
BASELINES = ("random", "greedy", "strategic")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo", help="the main demo: the shipped PPO agent against the baselines",
        description=__doc__.split("\n\n")[0].replace("``", "'"),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--games", type=int, default=16000,
                   help="games (rounded up to a multiple of 4)")
    p.add_argument("--seed", type=int, default=2026, help="tournament seed")
    p.add_argument("--workers", type=int, default=2, help="processes")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help="the PPO agent: a shipped policy's name ('uno-mk models') or a model "
                        "file")
    p.add_argument("--out", type=Path, default=None,
                   help="also save the result files (JSON, CSV, PNG) in this directory")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal and tqdm is "
                        "installed)")


def agent_specs(model: str | Path) -> list[str]:
    """The demo's entrants: the baselines and ``ppo:model``, each built once, so that a model
    that cannot be played (missing, damaged, a ``.zip`` without torch) is refused before any
    game.

    Raises:
        CLIError: the PPO agent cannot be built (one line naming the file and why).
    """
    specs = [*BASELINES, f"ppo:{model}"]
    check_agents(specs)
    return specs


def run(args: argparse.Namespace, out: TextIO) -> int:
    from uno_mk_env.evaluation.tournament import check_output_dir, run_tournament

    from .tournament import EXTRA, NEEDS, print_leaderboard, progress_wanted, save

    for flag, value in (("--games", args.games), ("--workers", args.workers)):
        if value < 1:
            raise CLIError(f"{flag} must be at least 1, got {value}")
    require(NEEDS, EXTRA, "uno-mk demo")
    if args.out is not None:
        check_output_dir(args.out)  # before playing, so a bad --out costs no results
    specs = agent_specs(args.model)
    progress = progress_wanted(args.progress)
    print(f"UNO Mario Kart demo: {', '.join(specs)} at a 4-player table, {args.games} games "
          "with duplicate deals (each deal replayed once per seat rotation)"
          + ("." if progress else f", {args.workers} worker(s); no progress bar (stderr is not "
             "a terminal)..."), file=out, flush=True)
    result = run_tournament(specs, num_players=4, games=args.games, seed=args.seed,
                            workers=args.workers, progress=progress)
    print_leaderboard(result, out)
    if args.out is not None:
        paths = save(result, args.out, out=out)
        print(f"saved: {', '.join(str(p) for p in paths.values())}", file=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uno_mk_env.cli.demo [ARGS]`` = ``uno-mk demo [ARGS]``."""
    from .app import main as app_main

    return app_main(["demo", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
