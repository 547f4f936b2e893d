"""Seed derivation: one home for turning a root seed and a key into an independent seed.

Tournaments, training and the command line derive every game's and agent's seed from the
run's root seed with :func:`derive_seed`, so a result depends only on the root seed and the
key (the game's index, the seat...), never on process or worker order.
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["Stream", "derive_seed"]


class Stream(enum.IntEnum):
    """The first key of ``derive_seed(seed, stream, ...)`` of each named random stream of a
    training run, named once (the table and seat streams are keyed by their indices)."""

    EVALUATION = 1000  #: ``(EVALUATION, opponent i, final 0/1[, players])``: evaluation deals
    SNAPSHOT = 2000  #: ``(SNAPSHOT, k)``: the k-th self-play snapshot's draws
    CLONING_TEACHER = 3000  #: behaviour cloning: the teacher agent
    CLONING_EPISODES = 3001  #: behaviour cloning: the teacher's seed per episode
    CLONING_DEAL = 3002  #: behaviour cloning: the first deal of its env
    CLONING_SPLIT = 3003  #: behaviour cloning: the held-out episodes and the minibatch order
    ACTIONS = 4000  #: ``(ACTIONS, table i)``: the learner's action draws at table i (fast)
    LEAGUE_SEATS = 7  #: ``(LEAGUE_SEATS, worker, env)``: RLlib's seat draws
    FIXED_SEATS = 8  #: ``(FIXED_SEATS, worker, env, seat, i)``: RLlib's rule-based seats


def derive_seed(root: int, *key: int) -> int:
    """A 32-bit seed for ``key`` under ``root`` (``numpy.random.SeedSequence(root,
    spawn_key=key)``): distinct keys give statistically independent streams."""
    return int(np.random.SeedSequence(root, spawn_key=key).generate_state(1)[0])
