"""The training tables as one batched vector env (:class:`uno_mk_env.envs.vector.
UnoMarioKartVectorEnv`).

:func:`make_vector_training_env` builds what :func:`uno_mk_env.training.envs.make_training_env`
builds for one env, for ``num_envs`` tables in one process: per table and opponent seat an
:class:`BatchedOpponentPool` drawing, every episode, one of ``--opponents`` or (with
``--self-play-prob``) a snapshot of the learner. A snapshot file is read once
(:class:`VectorLeague`); every table plays its own copy of the agent (its own random stream)
sharing the one numpy actor, so the vector env decides all tables waiting on a snapshot in one
forward pass.

:class:`uno_mk_env.training.sb3_vector.SB3VectorEnv` presents it as stable-baselines3's
``VecEnv``. Nothing here imports torch or stable-baselines3.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine.rules import PRESETS
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

from .args import TrainingError, specs
from .envs import Tables
from .opponents import OpponentPool

__all__ = ["BatchedOpponentPool", "VectorLeague", "check_vector_args",
           "make_vector_training_env"]


class BatchedOpponentPool(OpponentPool):
    """An :class:`~uno_mk_env.training.opponents.OpponentPool` that lets the vector env batch
    its decisions when the agent it plays this episode does
    (:class:`uno_mk_env.envs.vector.BatchedAgent`)."""

    def batched_policy(self) -> Any:
        method = getattr(self.current, "batched_policy", None)
        return None if method is None else method()

    def choose(self, logits: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.current.choose(logits, action_mask))  # type: ignore[attr-defined]


class VectorLeague:
    """The self-play league of every table: one list of snapshot agents per table (the
    ``snapshots`` of its pools), each snapshot read once and copied per table (the copies
    share its actor, each keeps its own generator), the newest ``max_snapshots`` kept."""

    def __init__(self, num_envs: int, max_snapshots: int = 5,
                 deterministic: bool = False) -> None:
        self.tables: list[list[Any]] = [[] for _ in range(num_envs)]
        self.max_snapshots = max_snapshots
        self.deterministic = deterministic

    def add(self, path: str, seed: int) -> int:
        """Adds the policy file ``path`` (``.zip`` or ``.npz``) to every table's league;
        returns the league's size."""
        agent = PPOAgent(path, seed=seed, deterministic=self.deterministic)
        for league in self.tables:
            league.append(copy.copy(agent))
            del league[:-self.max_snapshots]
        return len(self.tables[0])


def check_vector_args(args: Tables) -> None:
    """Refuses training tables the vector env does not implement yet (one line).

    Raises:
        TrainingError: several table sizes, another rules preset, a place reward or the
            asymmetric critic's state.
    """
    unsupported = [(args.table_sizes not in ("", str(args.num_players)), "--table-sizes"),
                   (args.rule_presets not in ("", "default"), "--rule-presets"),
                   (args.reward not in ("win", "points"), f"--reward {args.reward}"),
                   (bool(args.critic_state), "--critic-state")]
    named = [name for bad, name in unsupported if bad]
    if named:
        raise TrainingError(f"{', '.join(named)}: not supported by the vector env yet (one "
                            "table size, the default rules, reward win or points, no critic "
                            "state); use the sb3 backend")


def make_vector_training_env(args: Tables, num_envs: int, first: int = 0,
                             indices: Sequence[int] | None = None
                             ) -> tuple[UnoMarioKartVectorEnv, VectorLeague]:
    """``num_envs`` training tables of ``args`` and their league. Table ``i``'s seat ``s``
    pool is seeded ``derive_seed(seed, first + i, s)``
    (the pools of env rank ``i`` in the sb3 backend; ``first``: the index of the first table
    when the tables are split over processes), or ``derive_seed(seed, indices[i], s)`` when
    the tables' indices are given (the tables of one size in a mix of table sizes,
    :mod:`uno_mk_env.training.mixed_tables`).

    Raises:
        TrainingError: see :func:`check_vector_args`.
    """
    check_vector_args(args)
    opponents = specs(args.opponents)
    weights = [float(x) for x in args.opponent_weights.split(",") if x.strip()]
    league = VectorLeague(num_envs, args.max_snapshots, args.snapshot_deterministic)
    n = args.num_players

    def pools(i: int) -> list[BatchedOpponentPool]:
        index = first + i if indices is None else indices[i]
        return [BatchedOpponentPool(opponents, weights, args.self_play_prob, league.tables[i],
                                    derive_seed(args.seed, index, seat))
                for seat in range(n - 1)]

    venv = UnoMarioKartVectorEnv(num_envs, n, opponents=pools, reward=args.reward,
                                 max_steps=args.max_steps, **PRESETS["default"])
    return venv, league
