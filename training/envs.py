"""The learner's environment in training: :class:`TrainingEnv` draws the table of every episode
(player count and rules preset, each with a weight) and plays it with the Gymnasium wrapper
:class:`uno_mk_env.envs.gym_env.UnoMarioKartGymEnv`, one :class:`~uno_mk_env.training.opponents.
OpponentPool` per opponent seat and one :class:`~uno_mk_env.training.opponents.SnapshotLeague`
shared by all of them. The observation is the same 437 floats at every table size and preset,
so one policy learns them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from uno_mk_env.engine.actions import NUM_ACTIONS
from uno_mk_env.engine.observation import encode_state, observation_high, state_high
from uno_mk_env.engine.rewards import episode_places, place_reward, win_place_reward
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS, Rules
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv

from .args import specs, weighted
from .opponents import OpponentPool, SnapshotLeague

__all__ = ["PLACE_REWARDS", "Tables", "TrainingEnv", "make_training_env", "table_sizes"]


@dataclass(frozen=True)
class Tables:
    """What the training tables are, the fields of the arguments every env builder reads
    (:func:`make_training_env`, :func:`uno_mk_env.training.vector_envs.make_vector_training_env`,
    behaviour cloning's demonstrations); :meth:`of` takes them from a backend's ``Args`` (a
    field it lacks keeps the default here: one table size, the default rules, no critic
    state)."""

    num_players: int
    seed: int
    opponents: str
    opponent_weights: str = ""
    self_play_prob: float = 0.0
    max_snapshots: int = 5
    snapshot_deterministic: bool = False
    reward: str = "win"
    max_steps: int = 2000
    table_sizes: str = ""
    rule_presets: str = ""
    place_weight: float = 0.5
    critic_state: bool = False

    @classmethod
    def of(cls, args: Any, **changes: Any) -> Tables:
        """The tables of ``args`` (a backend's ``Args``), with ``changes``."""
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{**{n: getattr(args, n) for n in names if hasattr(args, n)}, **changes})

#: The rewards :class:`TrainingEnv` computes itself from the places at the end of a game.
PLACE_REWARDS = ("place", "win_place")


class TrainingEnv(gymnasium.Env):
    """One learning seat (drawn every episode) at a table drawn every episode.

    Args:
        tables: ``(num_players, preset)`` pairs (``preset`` a key of
            :data:`uno_mk_env.engine.rules.PRESETS`); drawn with ``weights`` at every reset from the
            env's own generator.
        weights: one per table, summing to 1.
        make_pools: ``(num_players, table_index) -> num_players - 1`` opponent policies; called
            once per table, on its first episode.
        league: the snapshots of the learner the pools draw from (see :meth:`add_snapshot`).
        reward: as :class:`~uno_mk_env.envs.gym_env.UnoMarioKartGymEnv` (``"win"``, ``"points"``),
            or, at the end of the game (0 before, and for a truncated game),
            ``"place"`` (:func:`uno_mk_env.engine.rewards.place_reward` of the seat's place, as
            tournaments rank them: :func:`uno_mk_env.engine.rewards.places`) or ``"win_place"``
            (:func:`uno_mk_env.engine.rewards.win_place_reward`).
        place_weight: the weight of the place reward in ``"win_place"`` (0-1).
        max_steps: as :class:`~uno_mk_env.envs.gym_env.UnoMarioKartGymEnv`.
        critic_state: append the game's perfect-information
            :func:`~uno_mk_env.engine.observation.encode_state` to the observation (the input of an
            asymmetric actor-critic, whose actor reads only the observation part).

    ``game``, ``seat`` and ``action_masks()`` are those of the current table.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        tables: Sequence[tuple[int, str]],
        weights: Sequence[float],
        make_pools: Callable[[int, int], list[Any]],
        league: SnapshotLeague,
        reward: str = "win",
        max_steps: int | None = 2000,
        critic_state: bool = False,
        place_weight: float = 0.5,
    ) -> None:
        self.tables = list(tables)
        self.weights = np.asarray(weights, dtype=float)
        self.make_pools = make_pools
        self.league = league
        self.reward = reward
        self.place_weight = place_weight
        self.max_steps = max_steps
        self.critic_state = critic_state
        self.rules = [Rules(num_players=n, **PRESETS[p]) for n, p in self.tables]
        high = np.max([observation_high(r) for r in self.rules], axis=0)
        if critic_state:
            high = np.concatenate([high, np.max([state_high(r) for r in self.rules], axis=0)])
        self.observation_space = gymnasium.spaces.Box(0.0, high, high.shape, np.float32)
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self._envs: dict[int, UnoMarioKartGymEnv] = {}
        self._seeded: set[int] = set()
        self._current: UnoMarioKartGymEnv | None = None

    # ------------------------------------------------------------------ current table
    @property
    def env(self) -> UnoMarioKartGymEnv:
        if self._current is None:
            raise RuntimeError("reset() needs to be called first")
        return self._current

    @property
    def game(self) -> Any:
        return self.env.game

    @property
    def seat(self) -> int:
        return self.env.seat

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def add_snapshot(self, path: str, seed: int) -> int:
        """Adds a frozen snapshot of the learner to the league; returns the league's size."""
        return self.league.add(path, seed)

    # ------------------------------------------------------------------ gymnasium API
    def _table(self, index: int) -> UnoMarioKartGymEnv:
        if index not in self._envs:
            n, preset = self.tables[index]
            self._envs[index] = UnoMarioKartGymEnv(
                num_players=n, opponents=self.make_pools(n, index),
                reward="win" if self.reward in PLACE_REWARDS else self.reward,
                max_steps=self.max_steps, **PRESETS[preset],
            )
        return self._envs[index]

    def _observation(self, obs: np.ndarray) -> np.ndarray:
        if self.critic_state:
            return np.concatenate([obs, encode_state(self.env.game)])
        return obs

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._seeded.clear()  # every table re-seeds from this seed on its next episode
        index = 0 if len(self.tables) == 1 else int(
            self.np_random.choice(len(self.tables), p=self.weights))
        self._current = self._table(index)
        inner_seed = None
        if index not in self._seeded:
            self._seeded.add(index)
            inner_seed = int(self.np_random.integers(2**63))
        obs, info = self._current.reset(seed=inner_seed)
        return self._observation(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.reward in PLACE_REWARDS and not info.get("illegal_action"):
            reward = self._place_reward() if terminated else 0.0
        return self._observation(obs), reward, terminated, truncated, info

    def _place_reward(self) -> float:
        game = self.env.game
        n = len(game.scores)
        place = episode_places(game)
        if self.reward == "place":
            return place_reward(n, place[self.env.seat])
        return win_place_reward(n, game.winner, self.env.seat, place[self.env.seat],
                                self.place_weight)


def make_training_env(tables: Tables, rank: int) -> TrainingEnv:
    """The training env of worker ``rank``: tables from ``--table-sizes`` (else
    ``--num-players``) crossed with ``--rule-presets`` (else the default rules), opponents from
    ``--opponents``/``--opponent-weights``, self-play from ``--self-play-prob``,
    ``--max-snapshots`` and ``--snapshot-deterministic``, seeds derived from ``--seed``."""
    sizes, size_w = table_sizes(tables)
    presets, preset_w = weighted(tables.rule_presets or "default", "--rule-presets",
                                 allowed=list(PRESETS))
    pairs = [(n, p) for n in sizes for p in presets]
    weights = [a * b for a in size_w for b in preset_w]
    opponents = specs(tables.opponents)
    opponent_weights = [float(x) for x in tables.opponent_weights.split(",") if x.strip()]
    league = SnapshotLeague(tables.max_snapshots, tables.snapshot_deterministic)

    def make_pools(n: int, index: int) -> list[Any]:
        # Table 0's pools keep the seeds of a single-table run (derive_seed(seed, rank, seat)).
        key = () if index == 0 else (index,)
        return [OpponentPool(opponents, opponent_weights, tables.self_play_prob, league,
                             derive_seed(tables.seed, rank, seat, *key))
                for seat in range(n - 1)]

    return TrainingEnv(pairs, weights, make_pools, league, reward=tables.reward,
                       max_steps=tables.max_steps, critic_state=tables.critic_state,
                       place_weight=tables.place_weight)


def table_sizes(tables: Tables) -> tuple[list[int], list[float]]:
    """The player counts of ``--table-sizes`` with their weights (``--num-players`` alone when
    empty).

    Raises:
        TrainingError: a count outside 2-10 or a bad weight.
    """
    allowed = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    return weighted(tables.table_sizes or str(tables.num_players), "--table-sizes", allowed,
                    int)
