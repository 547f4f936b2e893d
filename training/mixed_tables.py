"""The fast backend's training tables when they mix table sizes or pay a place reward.

The batched vector env (:class:`uno_mk_env.envs.vector.UnoMarioKartVectorEnv`) plays one table
size and pays ``win`` or ``points``. :class:`MixedTables` presents several of them as one:

* **Table sizes** (``--table-sizes "2,3,4,6,10"``, each size with an optional ``:weight``):
  training table ``i`` always plays the size :func:`size_of_table` gives it, a function of
  ``i`` and the weights only, so a run is the same however its tables are split over
  processes. The tables of one size are one vector env (their opponents decided together).
  Every size shares the 437-float observation and the 73 actions, so one policy learns them
  all. (The sb3 backend draws a size per episode instead; here a table keeps its size.)
* **Place rewards** (``--reward place`` or ``win_place``, ``--place-weight``): the tables play
  ``win``, and at the end of a finished game the learner is paid what
  :class:`uno_mk_env.training.envs.TrainingEnv` pays: :func:`~uno_mk_env.engine.rewards.
  place_reward` of its place, or :func:`~uno_mk_env.engine.rewards.win_place_reward`; 0 for a
  game cut by ``max_steps`` (an illegal action keeps its penalty). The places are the vector
  env's episode statistics, which only use what every seat may know.

:func:`make_training_tables` builds the plain vector env when neither is asked for (the
rollouts are then exactly those of earlier versions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_mk_env.engine.rewards import place_reward, win_place_reward
from uno_mk_env.envs.vector import STATS_KEY

from .envs import PLACE_REWARDS, Tables, table_sizes
from .vector_envs import check_vector_args, make_vector_training_env

__all__ = ["MixedTables", "check_training_tables", "make_training_tables", "size_of_table"]

#: The golden ratio's fractional part: table ``i`` sits at ``frac((i + 1) * PHI)`` on the
#: cumulative weights of the sizes (a low-discrepancy sequence: any run of consecutive tables
#: gets each size in proportion to its weight, to within about two tables).
PHI = 0.6180339887498949


def size_of_table(index: int, sizes: Sequence[int], weights: Sequence[float]) -> int:
    """The table size of training table ``index`` (see :data:`PHI`)."""
    u = ((index + 1) * PHI) % 1.0
    k = int(np.searchsorted(np.cumsum(weights), u, side="right"))
    return int(sizes[min(k, len(sizes) - 1)])


def _per_size(tables: Tables, num_players: int) -> Tables:
    """The plain vector env's tables of one size (the place rewards computed here)."""
    reward = "win" if tables.reward in PLACE_REWARDS else tables.reward
    return Tables.of(tables, num_players=num_players, table_sizes="", reward=reward)


def _mixed(tables: Tables) -> bool:
    return table_sizes(tables)[0] != [tables.num_players] or tables.reward in PLACE_REWARDS


def check_training_tables(tables: Tables) -> None:
    """Refuses, in one line, training tables the fast backend cannot play: a bad
    ``--table-sizes``, then what the vector env refuses at each size
    (:func:`~uno_mk_env.training.vector_envs.check_vector_args`).

    Raises:
        TrainingError: naming the option and its value.
    """
    for n in table_sizes(tables)[0]:
        check_vector_args(_per_size(tables, n))


class _Leagues:
    """The self-play leagues of every size's vector env, filled together."""

    def __init__(self, leagues: list[Any]) -> None:
        self.leagues = leagues

    def add(self, path: str, seed: int) -> int:
        return [league.add(path, seed) for league in self.leagues][0]


class MixedTables:
    """Tables ``first … first + count - 1`` of the training tables ``tables``: one vector env
    per table size, stepped as one (``reset``, ``step``, ``action_masks`` as
    :class:`~uno_mk_env.envs.vector.UnoMarioKartVectorEnv` in ``SAME_STEP`` mode, with the
    ``infos`` the rollouts read: ``uno_episode`` and ``final_obs``), the place rewards paid
    at the end of each game (see the module docstring)."""

    def __init__(self, tables: Tables, count: int, first: int = 0) -> None:
        sizes, weights = table_sizes(tables)
        self.count = count
        self.sizes = np.array([size_of_table(first + j, sizes, weights) for j in range(count)])
        self.reward, self.place_weight = tables.reward, tables.place_weight
        self.groups: list[tuple[int, np.ndarray, Any]] = []
        leagues = []
        for n in sorted(set(self.sizes.tolist())):
            where = np.flatnonzero(self.sizes == n)
            venv, league = make_vector_training_env(
                _per_size(tables, n), len(where), indices=[first + int(j) for j in where])
            self.groups.append((n, where, venv))
            leagues.append(league)
        self.league = _Leagues(leagues)
        self._obs: np.ndarray | None = None

    def action_masks(self) -> np.ndarray:
        masks = np.zeros((self.count, self.groups[0][2].action_masks().shape[1]), np.bool_)
        for _, where, venv in self.groups:
            masks[where] = venv.action_masks()
        return masks

    def reset(self, seed: Sequence[int]) -> tuple[np.ndarray, dict[str, Any]]:
        """Deals every table, table ``j`` seeded ``seed[j]``."""
        parts = [(where, venv.reset(seed=[int(seed[j]) for j in where])[0])
                 for _, where, venv in self.groups]
        obs = np.zeros((self.count, parts[0][1].shape[1]), np.float32)
        for where, part in parts:
            obs[where] = part
        return obs, {}

    def step(self, actions: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs = np.zeros((self.count, self.groups[0][2].single_observation_space.shape[0]),
                       np.float32)
        rewards = np.zeros(self.count, np.float64)
        term = np.zeros(self.count, np.bool_)
        trunc = np.zeros(self.count, np.bool_)
        stats = {"r": np.zeros(self.count), "l": np.zeros(self.count, np.int64),
                 "place": np.zeros(self.count, np.int64)}
        final_obs = np.full(self.count, None, dtype=object)
        for n, where, venv in self.groups:
            o, r, te, tr, info = venv.step(np.asarray(actions)[where])
            obs[where], rewards[where], term[where], trunc[where] = o, r, te, tr
            for k in np.flatnonzero(te | tr):
                j = where[k]
                final_obs[j] = info["final_obs"][k]
                ep, outcome = info[STATS_KEY], info["final_info"]
                stats["l"][j], stats["place"][j] = ep["l"][k], ep["place"][k]
                if self.reward in PLACE_REWARDS and not outcome["illegal_action"][k]:
                    rewards[j] = self._place_reward(n, te[k], int(outcome["winner"][k]),
                                                    int(outcome["learner_seat"][k]),
                                                    int(ep["place"][k]))
                    stats["r"][j] = rewards[j]  # the only non-zero reward of the game
                else:
                    stats["r"][j] = ep["r"][k]
        return obs, rewards, term, trunc, {STATS_KEY: stats, "final_obs": final_obs}

    def _place_reward(self, n: int, terminated: bool, winner: int, seat: int,
                      place: int) -> float:
        if not terminated:
            return 0.0
        if self.reward == "place":
            return place_reward(n, place)
        return win_place_reward(n, None if winner < 0 else winner, seat, place,
                                self.place_weight)


def make_training_tables(tables: Tables, count: int, first: int = 0) -> tuple[Any, Any]:
    """Tables ``first … first + count - 1`` of ``tables`` and their self-play league: the
    plain vector env for one table size and the ``win`` or ``points`` reward, else
    :class:`MixedTables`."""
    if not _mixed(tables):
        return make_vector_training_env(tables, count, first)
    mixed = MixedTables(tables, count, first)
    return mixed, mixed.league
