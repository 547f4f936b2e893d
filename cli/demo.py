"""``uno-mk demo``, the main demo: the shipped 4-player PPO agent against the baselines, at one
4-player table.

::

    uno-mk demo                    # ~1 minute on a 2-core machine (16,000 games)
    uno-mk demo --games 2000       # quicker
    python -m uno_mk_env.cli.demo  # the same

Plays a duplicate-deal tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`: every deal is replayed once per seat
rotation) between ``random``, ``greedy``, ``strategic`` and ``ppo:models/ppo_4p.zip`` (the
checkpoint shipped in the repository, found relative to this file, so the demo works from any
directory), and prints the leaderboard with 95 % confidence intervals. The progress bar is drawn
when stderr is a terminal; in a log (``make demo > log``) the output is plain lines. Without the
checkpoint (or without torch) it says so and plays the three baselines. Needs the ``eval`` extra.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .common import CLIError, importable, require

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The shipped 4-player checkpoint (``training/train_ppo.py``; command in ``models/ppo_4p.json``).
DEFAULT_MODEL = REPO_ROOT / "models" / "ppo_4p.zip"
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
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="4-player checkpoint")
    p.add_argument("--out", type=Path, default=None,
                   help="also save the result files (JSON, CSV, PNG) in this directory")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal and tqdm is "
                        "installed)")


def agent_specs(model: Path, out: TextIO = sys.stdout) -> list[str]:
    """The demo's entrants: the baselines plus ``ppo:model`` when it can be loaded."""
    specs = list(BASELINES)
    if not model.is_file():
        print(f"note: no PPO checkpoint at {model} (train one with 'uno-mk train "
              "--num-players 4 --save-path models/ppo_4p.zip'); playing the baselines only.",
              file=out)
        return specs
    if model.suffix == ".zip" and not importable("torch"):  # numpy plays the exported .npz
        if not model.with_suffix(".npz").is_file():
            print("note: the PPO agent needs torch (pip install torch==2.13.0) or the policy "
                  f"{model.with_suffix('.npz').name}; playing the baselines only.", file=out)
            return specs
        model = model.with_suffix(".npz")
    try:  # a short label when run from the repository
        label = model.resolve().relative_to(Path.cwd())
    except ValueError:
        label = model
    return [*specs, f"ppo:{label}"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    from uno_mk_env.evaluation.tournament import check_output_dir, run_tournament

    from .tournament import EXTRA, NEEDS, print_leaderboard, progress_wanted, save

    for flag, value in (("--games", args.games), ("--workers", args.workers)):
        if value < 1:
            raise CLIError(f"{flag} must be at least 1, got {value}")
    require(NEEDS, EXTRA, "uno-mk demo")
    if args.out is not None:
        check_output_dir(args.out)  # before playing, so a bad --out costs no results
    specs = agent_specs(args.model, out)
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
