"""Pure self-play in batch (:class:`SelfPlayVectorEnv`): every seat of every table is the
learner; the deciding seat's action is applied at each table and the next decider's observation
returned, with the reward every seat got from that step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding

from ..compiled import core
from ..engine import actions as A
from ..engine.game import Game, IllegalActionError
from ..engine.observation import OBS_SIZE, encode, observation_high
from ..engine.rewards import round_rewards
from ..engine.rules import Rules
from .aec import DEFAULT_MAX_STEPS, check_env_options
from .vector_args import STATS_KEY, check_actions, check_num_envs, reset_seeds

__all__ = ["SelfPlayVectorEnv"]

NUM_ACTIONS = A.NUM_ACTIONS
_KEEP = A.KEEP


class SelfPlayVectorEnv:
    """Every seat of ``num_envs`` tables is the learner (pure self-play), for trainers that
    batch all seats.

    :meth:`reset` and :meth:`step` return the observation ``(N, 437)`` and mask ``(N, 73)`` of
    each table's deciding seat (``infos["seat"]``); :meth:`step` takes that seat's action and
    returns the reward *every* seat got from it, ``(N, num_players)`` (the ``win`` reward
    arrives at the game's end, so a seat's return is the sum over the steps after each of its
    decisions), with ``terminated``/``truncated`` per table and SAME_STEP autoreset as
    :class:`UnoMarioKartVectorEnv` (``final_info``: ``winner``, ``scores``; ``uno_episode``:
    ``l``, the decisions of all seats, a ``KEEP`` not counted, as for ``max_steps``). It is not
    a Gymnasium ``VectorEnv`` (its rewards are per seat), and autoresets in the same step only.
    An illegal action at any table raises :class:`~uno_mk_env.IllegalActionError` naming every
    such table before any table is stepped (a trainer masks them). Seeds and bounds as
    :class:`UnoMarioKartVectorEnv`. Seed for
    seed, table ``i`` reset with ``seed`` plays the games of the AEC env (``raw_env``) reset
    with ``seed + i``, and then reset without a seed after each game (the oracle test).
    """

    def __init__(self, num_envs: int, num_players: int = 2, reward: str = "win",
                 max_steps: int | None = DEFAULT_MAX_STEPS, **rule_options: Any) -> None:
        num_envs = check_num_envs(num_envs)
        self.rules = Rules(num_players=num_players, **rule_options)
        check_env_options(reward, max_steps, None)
        self.num_envs = num_envs
        self.num_players = self.rules.num_players
        self.reward_mode = reward
        self.max_steps = max_steps
        self.single_observation_space = gymnasium.spaces.Box(
            0.0, observation_high(self.rules), (OBS_SIZE,), np.float32)
        self.single_action_space: gymnasium.spaces.Space[Any] = gymnasium.spaces.Discrete(
            NUM_ACTIONS)
        self._rngs = [seeding.np_random()[0] for _ in range(num_envs)]
        self._games: list[Game] = []  # dealt by reset() (the Python engine)
        self._started = False
        self._steps = [0] * num_envs
        self._obs = np.zeros((num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((num_envs, NUM_ACTIONS), bool)
        self._seats = np.zeros(num_envs, np.int64)
        #: ``"compiled"`` (the tables run on the compiled core) or ``"python"``.
        self.engine = "python"
        self._batch: Any = None
        module = core()
        if module is not None:
            self._batch = module.BatchedTables(num_envs, num_players, reward=reward,
                                               max_steps=max_steps, self_play=True,
                                               **rule_options)
            b = self._batch
            self._obs, self._masks, self._seats = b.obs, b.masks, b.seats  # written in place
            self.engine = "compiled"

    def games(self) -> list[Any]:
        """The engine of each table (hidden state included), as
        :meth:`UnoMarioKartVectorEnv.games`."""
        if self._batch is not None:
            return [self._batch.game(i) for i in range(self.num_envs)] if self._started else []
        return list(self._games)

    def action_masks(self) -> np.ndarray:
        """``(N, 73)`` bool masks of each deciding seat's legal actions (a copy)."""
        return self._masks.copy()  # type: ignore[no-any-return]

    def reset(self, *, seed: int | Sequence[int | None] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deals every table (``seed`` as :meth:`UnoMarioKartVectorEnv.reset`).

        Raises:
            ValueError: a refused seed; no table is changed.
        """
        seeds = reset_seeds(seed, self.num_envs)
        if self._batch is not None:
            self._batch.reset(seeds)
            self._started = True
            return self._obs.copy(), self._infos()
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i] = seeding.np_random(s)[0]
        self._games = [self._new_game(i) for i in range(self.num_envs)]
        for i in range(self.num_envs):
            self._steps[i] = 0
            self._observe(i)
        self._started = True
        return self._obs.copy(), self._infos()

    def _new_game(self, i: int) -> Game:
        return Game(self.rules, seed=int(self._rngs[i].integers(2**63)))

    def _deal(self, i: int) -> None:
        self._games[i] = self._new_game(i)
        self._steps[i] = 0
        self._observe(i)

    def _observe(self, i: int) -> None:
        game = self._games[i]
        seat = game.current_player
        view = game.view(seat)
        self._seats[i] = seat
        self._obs[i] = encode(view)
        mask = self._masks[i]
        mask[:] = False
        mask[list(view.legal_actions)] = True

    def _infos(self) -> dict[str, Any]:
        return {"seat": self._seats.copy(), "action_mask": self._masks.astype(np.int8)}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Applies each table's deciding seat's action (see the class docstring).

        Raises:
            TypeError, ValueError: ``actions`` is not ``num_envs`` ids 0-72.
            IllegalActionError: an action the deciding seat may not take, at any table.
            RuntimeError: before ``reset()``. Nothing is changed in any of these cases.
        """
        if not self._started:
            raise RuntimeError("reset() needs to be called before step()")
        acts = check_actions(actions, self.num_envs)
        illegal = np.flatnonzero(~self._masks[np.arange(self.num_envs), acts]).tolist()
        if illegal:
            raise IllegalActionError(
                "illegal actions, no table stepped: " + "; ".join(
                    f"table {i}: {A.ACTION_NAMES[acts[i]]} (id {int(acts[i])}), legal "
                    f"{np.flatnonzero(self._masks[i]).tolist()}" for i in illegal[:3])
                + (f"; and {len(illegal) - 3} more tables" if len(illegal) > 3 else ""))
        if self._batch is not None:
            return self._step_compiled(acts)
        num, n = self.num_envs, self.num_players
        rewards = np.zeros((num, n), np.float64)
        terminated = np.zeros(num, bool)
        truncated = np.zeros(num, bool)
        ended = []
        for i, a in enumerate(acts.tolist()):
            game = self._games[i]
            game.step(a)
            self._steps[i] += a != _KEEP
            if game.round_over:
                rewards[i] = round_rewards(game, self.reward_mode)
            if game.game_over:
                terminated[i] = True
            elif (self.max_steps is not None and self._steps[i] >= self.max_steps
                  and game.phase != A.PLAY_DRAWN):  # as the AEC env: never within a draw
                truncated[i] = True
            if terminated[i] or truncated[i]:
                ended.append(i)
            else:
                self._observe(i)
        final = None
        if ended:
            flags = np.zeros(num, bool)
            flags[ended] = True
            info = {"winner": np.full(num, -1, np.int64), "scores": np.zeros((num, n), np.int64)}
            lengths = np.zeros(num, np.int64)
            for i in ended:
                game = self._games[i]
                info["winner"][i] = -1 if not game.game_over or game.winner is None else (
                    game.winner)
                info["scores"][i] = game.scores
                lengths[i] = self._steps[i]
                self._deal(i)
            final = {"final_info": info, "_final_info": flags, STATS_KEY: {"l": lengths},
                     f"_{STATS_KEY}": flags.copy()}
        infos = self._infos()
        if final is not None:
            infos.update(final)
        return self._obs.copy(), rewards, terminated, truncated, infos

    def _step_compiled(self, acts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         np.ndarray, dict[str, Any]]:
        """:meth:`step` on the compiled core (the same results, written by the core)."""
        b = self._batch
        b.step(acts)
        infos = self._infos()
        flags = b.ended
        if flags.any():
            info = {"winner": np.where(flags, b.final_winner, -1),
                    "scores": np.where(flags[:, None], b.final_scores, 0)}
            infos.update({"final_info": info, "_final_info": flags.copy(),
                          STATS_KEY: {"l": np.where(flags, b.episode_length, 0)},
                          f"_{STATS_KEY}": flags.copy()})
        return self._obs.copy(), b.rewards.copy(), b.terminated.copy(), b.truncated.copy(), infos
