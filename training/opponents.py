"""Who the learner plays against: a pool of rule-based agents and a league of frozen snapshots
of the learner itself (self-play).

Each opponent seat of a training table is an :class:`OpponentPool`: at every episode it draws
the agent it plays with, a snapshot of the :class:`SnapshotLeague` with probability
``self_play_prob`` (once the league holds one), otherwise one of its agents by weight. The
league is shared by the seats of one environment and filled by the trainer
(:meth:`SnapshotLeague.add`, reached through the vectorised env's ``env_method``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine.seeding import derive_seed


class SnapshotLeague(list):
    """The frozen snapshots of the learner that opponent seats may play (newest last); holds at
    most ``max_snapshots`` (the oldest is dropped). Each snapshot is a
    :class:`uno_mk_env.agents.ppo.PPOAgent` (loaded without unpickling), sampling from its
    policy unless ``deterministic``."""

    def __init__(self, max_snapshots: int = 5, deterministic: bool = False) -> None:
        super().__init__()
        self.max_snapshots = max_snapshots
        self.deterministic = deterministic

    def add(self, path: str, seed: int) -> int:
        """Adds the model file ``path`` as a snapshot; returns the league's size."""
        self.append(PPOAgent(path, seed=seed, deterministic=self.deterministic))
        del self[:-self.max_snapshots]
        return len(self)


class OpponentPool:
    """One opponent seat: at every episode it draws the agent it plays with.

    With probability ``self_play_prob`` (and at least one snapshot in ``snapshots``) it plays a
    uniformly drawn snapshot of the learner, otherwise an agent of ``specs`` drawn with
    ``weights``. ``snapshots`` is a list shared by the seats of one env (a
    :class:`SnapshotLeague`). The draw uses the pool's own generator, seeded at construction
    (the vectorised env resets without a seed after the first episode).

    Raises:
        ValueError: ``weights`` do not fit ``specs``.
        AgentSpecError: a spec names no agent.
    """

    def __init__(
        self,
        specs: Sequence[str],
        weights: Sequence[float] | None,
        self_play_prob: float,
        snapshots: list[Any],
        seed: int,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.agents = [build_agent(spec, seed=derive_seed(seed, i)) for i, spec in enumerate(specs)]
        w = np.ones(len(specs)) if not weights else np.asarray(weights, dtype=float)
        if len(w) != len(specs) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"opponent weights {list(w)} do not fit the opponents {list(specs)}")
        self.weights = w / w.sum()
        self.self_play_prob = self_play_prob
        self.snapshots = snapshots
        self.current = self.agents[0]

    def compiled_twin(self) -> tuple[str, Any, Any] | None:
        """The compiled core's twin of this seat (:meth:`uno_mk_env.agents.base.Agent.
        compiled_twin`) when the pool never plays a snapshot (``self_play_prob`` 0) and every
        agent it draws has a twin: ``("pool", twins, cdf)``, the agents' twins and
        :meth:`numpy.random.Generator.choice`'s cumulative weights. The core then draws at
        every reset, from the pool's generator, what :meth:`reset` draws; anything else plays
        in Python."""
        if self.self_play_prob > 0:
            return None
        twins = tuple(agent.compiled_twin() for agent in self.agents)
        if any(t is None for t in twins):
            return None
        cdf = self.weights.cumsum()
        cdf /= cdf[-1]  # as Generator.choice computes it
        return ("pool", twins, tuple(float(x) for x in cdf))

    @property
    def needs_observation(self) -> bool:
        return self.current.needs_observation

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if self.self_play_prob > 0 and self.snapshots and self.rng.random() < self.self_play_prob:
            self.current = self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        else:
            self.current = self.agents[int(self.rng.choice(len(self.agents), p=self.weights))]
        self.current.reset(int(self.rng.integers(2**63)))

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: Any) -> int:
        return self.current.act(observation, action_mask, view)
