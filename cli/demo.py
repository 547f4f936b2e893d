"""The main demo: the shipped 4-player PPO agent against the baselines, at one 4-player table.

::

    python -m uno_mk_env.cli.demo                 # ~1 minute on a 2-core machine (16,000 games)
    python -m uno_mk_env.cli.demo --games 2000    # quicker

Plays a duplicate-deal tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`: every deal is replayed once per seat
rotation) between ``random``, ``greedy``, ``strategic`` and ``ppo:models/ppo_4p.zip`` (the
checkpoint shipped in the repository, found relative to this file, so the demo works from any
directory), with a progress bar, and prints the leaderboard with 95 % confidence intervals. Without
the checkpoint (or without torch) it says so and plays the three baselines.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The shipped 4-player checkpoint (``training/train_ppo.py``; command in ``models/ppo_4p.json``).
DEFAULT_MODEL = REPO_ROOT / "models" / "ppo_4p.zip"
BASELINES = ("random", "greedy", "strategic")


def agent_specs(model: Path, out=sys.stdout) -> list[str]:
    """The demo's entrants: the baselines plus ``ppo:model`` when it can be loaded."""
    specs = list(BASELINES)
    if not model.is_file():
        print(f"note: no PPO checkpoint at {model} (train one with 'uno-mk train "
              "--num-players 4 --save-path models/ppo_4p.zip'); playing the baselines only.",
              file=out)
        return specs
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        print("note: the PPO agent needs the training extras (pip install -e '.[train]'); "
              "playing the baselines only.", file=out)
        return specs
    try:  # a short label when run from the repository
        label = model.resolve().relative_to(Path.cwd())
    except ValueError:
        label = model
    return [*specs, f"ppo:{label}"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uno_mk_env.cli.demo", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--games", type=int, default=16000,
                        help="games (rounded up to a multiple of 4)")
    parser.add_argument("--seed", type=int, default=2026, help="tournament seed")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="4-player checkpoint")
    parser.add_argument("--out", type=Path, default=None,
                        help="also save the result files (JSON, CSV, PNG) in this directory")
    args = parser.parse_args(argv)

    from uno_mk_env.cli.app import print_leaderboard
    from uno_mk_env.evaluation.tournament import OutputPathError, check_output_dir, run_tournament

    if args.out is not None:
        try:
            check_output_dir(args.out)  # before playing, so a bad --out costs no results
        except OutputPathError as e:
            parser.error(str(e))

    specs = agent_specs(args.model)
    print(f"UNO Mario Kart demo: {', '.join(specs)} at a 4-player table, {args.games} games "
          "with duplicate deals (each deal replayed once per seat rotation).", flush=True)
    result = run_tournament(specs, num_players=4, games=args.games, seed=args.seed,
                            workers=args.workers, progress=True)
    print_leaderboard(result, sys.stdout)
    if args.out is not None:
        paths = result.save(args.out)
        print(f"saved: {', '.join(str(p) for p in paths.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
