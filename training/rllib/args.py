"""The RLlib backend's arguments: :class:`~uno_mk_env.training.args.TrainArgs` (those of every
backend, each written once there) with this backend's defaults, and the cluster, league and PPO
arguments of RLlib; their checks. Imports nothing of Ray."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from uno_mk_env.engine.rewards import REWARD_MODES

from .. import args as _args
from ..args import TrainArgs, TrainingError

__all__ = ["DESCRIPTION", "PROG", "RESUME_FIXED", "RESUME_MAY_CHANGE", "Args", "check_args",
           "parse_args"]

PROG = "uno-mk train --backend rllib"
#: The ``--help`` description.
DESCRIPTION = (
    "Multi-agent PPO self-play on Ray RLlib (the 'rllib' extra), on this machine or on a Ray "
    "cluster (--address): every seat of the table an RLlib agent of one action-masked policy, "
    "with frozen snapshots of it (--league-size) and rule-based seats (--opponents) drawn "
    "every episode; evaluated against --eval-opponents on duplicate deals every --eval-every "
    "env steps. Outputs go to runs/<run>/ (config.json, progress.csv, TensorBoard, eval.csv, "
    "curve.png, checkpoints, final.npz, summary.json); the last line printed is "
    "'agent: ppo:PATH'. The design: the docstring of uno_mk_env.training.rllib.")


@dataclass
class Args(TrainArgs):
    """The RLlib backend's arguments (see the module docstring)."""

    # defaults of this backend (the help is TrainArgs')
    exp_name: str = "rllib_ppo"
    opponents: str = ""
    snapshot_every: int = 200_000
    net_arch: str = "256,256"
    eval_every: int = 100_000
    checkpoint_every: int = 500_000

    # cluster
    address: str = ""
    """Ray cluster to join, HOST:PORT of its head (empty: $RAY_ADDRESS if set, else start a
    local Ray on this machine)"""
    num_cpus: int = 0
    """CPUs of the local Ray started without --address (0: all of this machine's)"""
    num_env_runners: int = -1
    """env runner actors that sample (-1: the cluster's CPUs minus one for the learner, at
    least 1; 0: sample in the driver process)"""
    envs_per_runner: int = 8
    """environments each env runner steps (vectorised: one forward pass for all of them)"""
    num_learners: int = 0
    """learner actors (0: learn in the driver process; n > 0: n learner actors, data-parallel)"""

    # opponents
    league_size: int = 4
    """frozen snapshots of the learner kept as opponents (0: pure self-play)"""
    league_prob: float = 0.3
    """probability that a seat other than the guaranteed learner seat is a league seat"""
    opponent_prob: float = 0.0
    """probability that a seat other than the guaranteed learner seat is one of --opponents"""

    # algorithm
    train_batch_size: int = 8000
    """env steps per training iteration (per learner)"""
    minibatch_size: int = 512
    """minibatch size"""
    num_epochs: int = 6
    """epochs over each training batch"""
    clip_param: float = 0.2
    """PPO clipping coefficient"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    vf_loss_coeff: float = 0.5
    """value loss coefficient"""
    grad_clip: float = 0.5
    """gradient clipping norm"""

    # evaluation
    eval_workers: int = 1
    """processes of each evaluation tournament"""


#: Arguments a resumed run may change; the others (:data:`RESUME_FIXED`) belong to the model and
#: its optimisation and are taken from the checkpoint's run.
RESUME_MAY_CHANGE = frozenset({
    "exp_name", "seed", "torch_threads", "address", "num_cpus", "num_env_runners",
    "envs_per_runner", "num_learners", "league_prob", "snapshot_every", "opponents",
    "opponent_prob", "total_timesteps", "eval_every", "eval_games", "final_eval_games",
    "eval_opponents", "eval_workers", "checkpoint_every", "runs_dir", "save_path", "max_minutes",
    "resume", "progress", "max_steps", "num_players", "reward",
})
RESUME_FIXED = tuple(f.name for f in dataclasses.fields(Args) if f.name not in RESUME_MAY_CHANGE)


def parse_args(argv: Sequence[str] | None = None, prog: str = PROG) -> Args:
    """:class:`Args` from the command line (``--num-players 4``; booleans as ``--x/--no-x``)."""
    return _args.parse(Args, argv, prog, DESCRIPTION)


def check_args(args: Args) -> None:
    """Refuses arguments that cannot run, each with a one-line reason: every value
    (:func:`uno_mk_env.training.args.check`), then this backend's combinations.

    Raises:
        TrainingError: the first bad argument, naming its value and what is allowed.
    """
    _args.check(args, rewards=REWARD_MODES)
    if args.opponent_prob > 0 and not _args.specs(args.opponents):
        raise _args.refuse("opponents", args.opponents,
                           "--opponent-prob > 0 needs at least one agent")
    if args.minibatch_size > args.train_batch_size:
        raise _args.refuse("minibatch_size", args.minibatch_size,
                           f"must be <= --train-batch-size ({args.train_batch_size})")
    if args.league_prob + args.opponent_prob > 1.0:
        raise TrainingError(f"--league-prob {args.league_prob} + --opponent-prob "
                            f"{args.opponent_prob} exceed 1")
