"""Approximate exploitability: train a best response against a fixed agent and measure it.

::

    python -m uno_mk_env.training.best_response ppo:models/ppo_2p.npz --players 2 \\
        --total-timesteps 1000000 --csv docs/images/exploitability.csv
    uno-mk exploit strategic --players 4            # the same, through the command line

For a target agent ``T`` at ``N`` players this trains a fresh MaskablePPO learner
(:mod:`uno_mk_env.training.train_ppo`) against ``N - 1`` copies of ``T`` and nothing else (no
self-play, no other opponents) with one fixed recipe (:data:`RECIPE`: behaviour cloning of
``strategic``, then PPO for ``--total-timesteps`` learner decisions), and then plays the trained
best response against ``T`` on the standard protocol's deals (:mod:`uno_mk_env.evaluation.protocol`,
one line: duplicate deals with seat rotation, root seed ``SEEDS[N]``, never used in training).
The best response's win rate is the **approximate exploitability** of ``T``: the lower, the
harder ``T`` is to exploit with this budget. A true best response would win at least as much;
the same recipe and budget for every target make the figures comparable with each other, not
absolute. As a reference, the same run against ``strategic`` says how far this budget gets
against the heuristic the learner starts from.

Everything is checked before training starts (the target loads, the player count, the output
places, and that an existing ``--csv`` has the columns of :data:`FIELDS`). Each run writes its
training folder under ``--runs-dir`` and, with ``--csv``, appends one row (:data:`FIELDS`) to that
CSV. ``target_sha256`` names the model file the target loaded
(:func:`uno_mk_env.evaluation.protocol.file_sha256`; empty for the rule agents), so that a row
still says which model it probed after the file at that path is replaced.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_mk_env.agents.base import AgentSpecError, build_agent
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.evaluation import protocol
from uno_mk_env.evaluation.match import admit
from uno_mk_env.evaluation.protocol import file_sha256
from uno_mk_env.evaluation.tournament import OutputPathError, check_output_dir
from uno_mk_env.files import append_csv_row

from . import train_ppo
from .args import TrainingError

#: The fixed training recipe of every best response (train_ppo arguments): the 2-player
#: shipped model's PPO settings, started from behaviour cloning of ``strategic``.
RECIPE: tuple[str, ...] = (
    "--n-envs", "16", "--vec-env", "dummy", "--n-steps", "512", "--batch-size", "2048",
    "--n-epochs", "5", "--learning-rate", "1e-4", "--ent-coef", "0.0", "--clip-range", "0.15",
    "--net-arch", "256,256", "--self-play-prob", "0", "--snapshot-every", "0",
    "--bc-teacher", "strategic", "--bc-steps", "150000", "--bc-epochs", "8",
    "--final-eval-games", "400", "--checkpoint-every", "0", "--no-progress",
)
FIELDS = ["target", "target_sha256", "players", "timesteps", "train_seconds", "games",
          "win_rate", "ci_low", "ci_high", "fair_share", "mean_place", "ahead", "root_seed",
          "policy", "command"]


def train_args(target: str, players: int, timesteps: int, seed: int, runs_dir: str,
               eval_every: int) -> list[str]:
    """The train_ppo command line of a best response against ``target``."""
    return [*RECIPE, "--exp-name", "br", "--num-players", str(players), "--seed", str(seed),
            "--opponents", target, "--opponent-weights", "1", "--eval-opponents", target,
            "--eval-every", str(eval_every), "--eval-games", "400",
            "--total-timesteps", str(timesteps), "--runs-dir", runs_dir]


def check(args: argparse.Namespace) -> str:
    """Refuses a request before any training (one line, :class:`ValueError`); returns the
    SHA-256 of the target's model file as it is before training (``""``: none)."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise ValueError(f"--players {args.players}: allowed {MIN_PLAYERS}-{MAX_PLAYERS}")
    if args.total_timesteps <= 0:
        raise ValueError(f"--total-timesteps {args.total_timesteps}: must be > 0")
    if args.games <= 0:
        raise ValueError(f"--games {args.games}: must be > 0")
    agent = build_agent(args.target, seed=0)  # AgentSpecError for an unknown or broken spec
    # the one cheating policy (evaluation.match): a target is never admitted
    admit(agent, args.target, allow_cheating=False,
          refusal=f"target {args.target!r} sees hidden cards: a best response to it measures "
                  "nothing a real opponent allows")
    check_output_dir(args.runs_dir, [])
    if args.csv is not None:
        check_output_dir(args.csv.parent, [args.csv.name])
        if args.csv.is_file() and args.csv.stat().st_size:
            with args.csv.open(newline="") as f:
                header = next(csv.reader(f), [])
            if header != FIELDS:
                raise ValueError(f"--csv {args.csv}: its columns {header} are not this "
                                 f"command's {FIELDS}; name a new file")
    return file_sha256(args.target) or ""


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Trains the best response and plays its protocol line against the target."""
    digest = check(args)
    argv = train_args(args.target, args.players, args.total_timesteps, args.seed,
                      args.runs_dir, args.eval_every)
    t0 = time.time()
    summary = train_ppo.train(train_ppo.parse_args(argv),
                              invocation=" ".join([train_ppo.PROG, *argv]))
    seconds = round(time.time() - t0, 1)
    policy = summary["policy"]
    line = protocol.Line(args.players, args.target, args.games, protocol.SEEDS[args.players])
    result = protocol.run_line(f"ppo:{policy}", line, workers=args.workers)
    m = protocol.line_metrics(result.records)
    row = {
        "target": args.target, "target_sha256": digest, "players": args.players,
        "timesteps": summary["timesteps"], "train_seconds": seconds, "games": m["games"],
        "win_rate": round(m["win_rate"]["value"], 4),
        "ci_low": round(m["win_rate"]["ci_low"], 4), "ci_high": round(m["win_rate"]["ci_high"], 4),
        "fair_share": round(1 / args.players, 4),
        "mean_place": round(m["mean_place"]["value"], 3), "ahead": round(m["ahead"]["value"], 4),
        "root_seed": line.seed, "policy": policy,
        "command": " ".join([PROG, *command_args(args)]),
    }
    if args.csv is not None:
        append_csv_row(args.csv, FIELDS, row)
    return row


def command_args(args: argparse.Namespace) -> list[str]:
    """The arguments that reproduce a run (the output places left out)."""
    return [args.target, "--players", str(args.players), "--total-timesteps",
            str(args.total_timesteps), "--seed", str(args.seed), "--games", str(args.games)]


PROG = "python -m uno_mk_env.training.best_response"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("target", help="agent spec of the agent to exploit, e.g. strategic or "
                                  "ppo:models/ppo_2p.npz")
    p.add_argument("--players", type=int, default=2, help="table size (the target fills the "
                                                          "other seats)")
    p.add_argument("--total-timesteps", type=int, default=1_000_000,
                   help="learner decisions of PPO after behaviour cloning (the fixed budget)")
    p.add_argument("--seed", type=int, default=1, help="training seed")
    p.add_argument("--games", type=int, default=10_000,
                   help="games of the final line against the target (protocol deals)")
    p.add_argument("--eval-every", type=int, default=250_000,
                   help="steps between the training curve's evaluations (400 games)")
    p.add_argument("--workers", type=int, default=1, help="processes for the final line")
    p.add_argument("--runs-dir", default="runs", help="where the training run folder goes")
    p.add_argument("--csv", type=Path, help="append the result row to this CSV")
    return p


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """0 with the result row printed, 2 with a one-line error for a refused request."""
    parser = build_parser(prog or PROG)
    args = parser.parse_args(argv)
    try:
        row = run(args)
    except (ValueError, AgentSpecError, OutputPathError, TrainingError) as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    for key in FIELDS:
        print(f"{key}: {row[key]}")
    print(f"best response vs {row['target']} at {row['players']} players: win rate "
          f"{row['win_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] "
          f"(fair share {row['fair_share']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
