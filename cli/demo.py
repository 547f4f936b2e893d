"""``uno-mk demo``, the main demo: the shipped 4-player PPO agent against the baselines, at one
4-player table.

::

    uno-mk demo                    # 16,000 games: about 1 minute of CPU time (see docs/usage.md)
    uno-mk demo --games 2000       # quicker
    python -m uno_mk_env demo      # the same

Plays a duplicate-deal tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`: every deal is replayed once per seat
rotation) between ``random``, ``greedy``, ``strategic`` and ``ppo:ppo_4p`` (the 4-player policy
shipped with the package, :mod:`uno_mk_env.agents.shipped`, played with numpy alone, so the demo
works from any directory and without torch), and prints the leaderboard with 95 % confidence
intervals, sorted by win rate, the measure the demo is about; where the rating orders two agents
otherwise, a note says why (:func:`~uno_mk_env.cli.tournament.ranking_note`), and the last line
names the PPO agent's place by win rate. Progress goes to stderr: a bar on a terminal, a line
every few seconds in a log (``make demo > log``). Tables fit the terminal (``COLUMNS``).
``--model`` plays another policy (a shipped name or a model file); a model that cannot be loaded
ends the demo before any game with one line saying why, never a demo without it. Needs the
``eval`` extra.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.evaluation.tournament import (
    TournamentResult,
    check_output_dir,
    check_sizes,
    run_tournament,
)

from .common import CLIError, check_agents, print_wrapped, require
from .tournament import EXTRA, NEEDS, PROGRESS_HELP, print_leaderboard, progress_wanted, save

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
                   help=PROGRESS_HELP)


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
    try:  # sizes beyond their bounds, before anything is built or played
        check_sizes(args.games, args.workers, flags={"games": "--games", "workers": "--workers"})
    except ValueError as e:
        raise CLIError(str(e)) from None
    if args.seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {args.seed}")
    require(NEEDS, EXTRA, "uno-mk demo")
    if args.out is not None:
        check_output_dir(args.out)  # before playing, so a bad --out costs no results
    specs = agent_specs(args.model)
    print_wrapped(out, f"UNO Mario Kart demo: {', '.join(specs)} at a 4-player table, "
                  f"{args.games:,} games with duplicate deals (each deal replayed once per seat "
                  f"rotation) on {args.workers} worker(s), ranked by win rate (the share of "
                  "games won; an equal share is 0.25).")
    out.flush()
    result = run_tournament(specs, num_players=4, games=args.games, seed=args.seed,
                            workers=args.workers, progress=progress_wanted(args.progress),
                            progress_label="demo")
    print_leaderboard(result, out)
    if args.out is not None:
        paths = save(result, args.out, out=out)
        print_wrapped(out, f"saved: {', '.join(str(p) for p in paths.values())}")
    print_wrapped(out, headline(result, specs[-1]))
    return 0


def headline(result: TournamentResult, label: str) -> str:
    """The demo's last line: the PPO agent's win rate and its place by win rate."""
    board = result.leaderboard()
    row = next(r for r in board if r["agent"] == label)
    n = result.config["num_players"]
    rank = _ORDINALS.get(row["rank"], f"number {row['rank']}")
    return (f"{label} wins {row['win_rate']:.3f} [{row['win_ci_low']:.3f}, "
            f"{row['win_ci_high']:.3f}] of its games (an equal share is {1 / n:.2f}): "
            f"{rank} of {len(board)} by win rate.")


_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}
