"""Batched environments: N tables stepped in one process, for fast training.

:class:`UnoMarioKartVectorEnv`
    A Gymnasium ``VectorEnv``: one learning seat at each of ``num_envs`` tables, the other seats
    played by opponents inside :meth:`~UnoMarioKartVectorEnv.step`, exactly as
    :class:`uno_mk_env.envs.gym_env.UnoMarioKartGymEnv` plays them (each table runs on the
    wrapper's own :class:`~uno_mk_env.envs.learner.LearnerSeat`): seed for seed, table ``i``
    gives the trajectory of a single wrapper env reset with ``seed + i`` (and stepped with the
    same actions; the oracle test checks it). Opponents that are policies (:class:`BatchedAgent`:
    self-play snapshots, ``.npz`` agents) are decided in one forward pass over every table
    waiting on the same network; rule-based opponents table by table.

:class:`~uno_mk_env.envs.self_play.SelfPlayVectorEnv` (module :mod:`.self_play`)
    Every seat of every table is the learner (pure self-play): :meth:`~SelfPlayVectorEnv.step`
    applies the deciding seat's action at each table and returns the next decider's
    observation, with the reward every seat got from that step.

Action Space
    ``MultiDiscrete([73] * num_envs)``: an ``(N,)`` integer array, one action id per table.
    :meth:`~UnoMarioKartVectorEnv.action_masks` gives the ``(N, 73)`` bool masks of the legal
    ones; ``infos["action_mask"]`` holds the same as ``int8`` (the single env's type).

Observation Space
    ``Box(0, high, (N, 437), float32)``: :func:`uno_mk_env.engine.observation.encode` of each
    learner's
    view.

Rewards, Episode End
    As the single wrapper env (``reward="win"`` or ``"points"``; an illegal learner action ends
    the episode with ``illegal_action_penalty``; truncation after ``max_steps`` decisions).

Info
    Every step's ``infos`` hold ``action_mask`` ``(N, 73)`` ``int8`` and ``learner_seat``
    ``(N,)``. When episodes end, their outcome (``winner``, −1: none; ``scores``;
    ``learner_seat``; ``illegal_action``) and their statistics ``infos["uno_episode"]`` (mask
    ``_uno_episode``): the return ``r``, the length ``l`` (learner decisions) and the learner's
    place ``place`` (1 = first, :func:`uno_mk_env.engine.rewards.episode_places`). The key is not
    ``"episode"``: that one is Gymnasium's ``RecordEpisodeStatistics`` wrapper's, which this env
    works under.

    Nothing in ``infos`` depends on cards a learner cannot see: at a game's end the places
    follow the points left in hand, which the end-of-game scoring shows every seat (R10.2);
    when an episode is cut before (``max_steps``, an illegal action) they follow the public
    count of cards left in hand (fewer is better; ties share the better place), never the
    hidden points. Two tables that differ only in such cards give the same observations,
    masks, rewards and infos (the hidden-twin tests).

Autoreset
    ``autoreset_mode`` (an :class:`gymnasium.vector.AutoresetMode` or its value, also in
    ``metadata["autoreset_mode"]``), as Gymnasium's ``SyncVectorEnv`` over the single env:

    - ``SAME_STEP`` (default): a table whose episode ended is dealt again inside the same
      ``step``; its row of the returned observation (and mask) is the new episode's first,
      ``infos["final_obs"]`` (an object array) and ``infos["final_info"]`` (the outcome) hold
      the ended one's, with the masks ``_final_obs``/``_final_info``.
    - ``NEXT_STEP``: the ending step returns the ended episode's last observation, an all-zero
      mask and the outcome at the top level of ``infos`` (``winner``, ``scores``,
      ``illegal_action`` with their masks ``_winner``...); the next ``step`` deals the table
      again, ignores its action (any id 0-72), and returns reward 0, not done, and the new
      episode's first observation. Gymnasium's ``NormalizeObservation`` vector wrapper needs
      this mode; its ``TransformObservation`` and ``DtypeObservation`` take it or ``DISABLED``.
      (Gymnasium 1.2's ``RecordEpisodeStatistics`` counts ``SAME_STEP`` episodes after the
      first one step short, Gymnasium PR #1624; ``uno_episode`` is right in every mode.)
    - ``DISABLED``: as ``NEXT_STEP`` at the ending step, then the table stays ended: ``step``
      refuses to run until ``reset(options={"reset_mask": mask})`` has dealt it again.

    ``reset(options={"reset_mask": mask})`` (a bool array of ``num_envs``) deals only the
    masked tables, in every mode.

Arguments
    ``num_envs`` (1-4096: :data:`MAX_ENVS`); ``num_players``; ``opponents``: ``None``
    (uniformly random legal actions from each table's generator, as the single env), or a
    callable ``table_index ->`` what the single env takes as ``opponents`` (one policy, or
    ``num_players - 1`` policies, or ``None``), called once per table so that tables do not
    share stateful opponents (sharing one object between tables is allowed, but then its random
    stream interleaves across tables); ``learner_seat``, ``reward``, ``illegal_action_penalty``,
    ``max_steps`` and the rule options as the single env; ``autoreset_mode``. No rendering.

Seeds, Bad Input
    ``reset(seed=...)``: ``None``, an integer (table ``i`` is reseeded with ``seed + i``) or a
    sequence of ``num_envs`` integers or ``None``, each integer ``0 <= seed < 2**64``
    (:func:`uno_mk_env.envs.gym_env.check_seed`); a ``bool``, a float, a string is refused. A call
    is
    checked whole before any table changes: a refused ``reset`` or ``step`` leaves every table
    as it was.

Engine
    Both envs run on the compiled core's batched tables when it runs (``UNO_MK_ENGINE``) and the
    opponents are ones it plays itself (``None``, and agents naming a compiled twin:
    ``random``, ``greedy``, ``strategic``); else on the Python engine, the reference. The
    results are the same (docs/compiled.md); ``engine`` says which runs.

Version History
    v0: initial release. Package 0.10.0: ``autoreset_mode`` (``NEXT_STEP``, ``DISABLED``),
    ``reset_mask``; the episode statistics under ``"uno_episode"`` (was ``"episode"``), the
    place at a truncation from the public card counts (was hidden hand points).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from ..compiled import core
from ..compiled.tables import compiled_opponents
from ..engine import actions as A
from ..engine.observation import OBS_SIZE, encode, observation_high
from ..engine.rewards import episode_places
from ..engine.rules import Rules
from . import learner
from .aec import DEFAULT_MAX_STEPS, check_env_options
from .learner import LearnerSeat
from .self_play import SelfPlayVectorEnv  # noqa: F401  (0.9.0's uno_mk_env.vector held both)
from .vector_args import (
    MAX_ENVS,
    STATS_KEY,
    check_actions,
    check_autoreset_mode,
    check_num_envs,
    reset_mask,
    reset_seeds,
)

__all__ = ["MAX_ENVS", "STATS_KEY", "BatchedAgent", "BatchedPolicy", "UnoMarioKartVectorEnv",
           "check_actions", "check_num_envs"]

NUM_ACTIONS = A.NUM_ACTIONS


class BatchedPolicy(Protocol):
    """A network that decides for many tables at once."""

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """``(K, 437)`` float32 observations -> ``(K, 73)`` logits (before masking)."""


@runtime_checkable
class BatchedAgent(Protocol):
    """An opponent whose decisions may be batched (besides ``act``/``reset``, which the single
    env uses): :meth:`batched_policy` names the network deciding its next action (``None``: ask
    ``act`` instead); tables waiting on the same network object share one forward pass, then
    each agent picks its action from its row of logits with :meth:`choose` (its own random
    stream, so the result is the one ``act`` would give)."""

    def batched_policy(self) -> BatchedPolicy | None:
        """The network of the next decision, or ``None``."""

    def choose(self, logits: np.ndarray, action_mask: np.ndarray) -> int:
        """The action for one row of logits ``(73,)`` and the ``int8`` mask."""


class UnoMarioKartVectorEnv(VectorEnv):  # type: ignore[type-arg]
    """One learning seat at each of ``num_envs`` tables; see the module docstring."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents: Callable[[int], Any] | None = None,
        learner_seat: int | None = None,
        reward: str = "win",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = DEFAULT_MAX_STEPS,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        **rule_options: Any,
    ) -> None:
        num_envs = check_num_envs(num_envs)
        check_env_options(reward, max_steps, None)
        mode = check_autoreset_mode(autoreset_mode)
        if opponents is not None and not callable(opponents):
            raise TypeError("opponents must be None or a callable table_index -> opponents, got "
                            f"{type(opponents).__name__}")
        self.num_envs = num_envs
        self.reward_mode = reward
        self.max_steps = max_steps
        self.learner_seat = learner_seat
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.rules = Rules(num_players=num_players, **rule_options)
        # Each table is checked (learner_seat, opponents...) as the single env checks; each is
        # the single env's runner (learner.LearnerSeat), its network opponents batched.
        self._seats = [LearnerSeat(self.rules, None if opponents is None else opponents(i),
                                   learner_seat, reward, illegal_action_penalty, max_steps,
                                   batched=True)
                       for i in range(num_envs)]
        self.illegal_action_penalty = self._seats[0].illegal_action_penalty
        spec = compiled_opponents([t.opponents for t in self._seats])
        self.single_observation_space = gymnasium.spaces.Box(
            0.0, observation_high(self.rules), (OBS_SIZE,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, num_envs)
        self.action_space = gymnasium.spaces.MultiDiscrete(np.full(num_envs, NUM_ACTIONS))
        self._obs = np.zeros((num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((num_envs, NUM_ACTIONS), bool)
        self._ended = np.zeros(num_envs, bool)  # NEXT_STEP/DISABLED: ended, not dealt again yet
        self._started = False
        #: ``"compiled"`` (the tables run on the compiled core) or ``"python"``.
        self.engine = "python"
        self._batch: Any = None
        if spec is not None:
            self._batch = core().BatchedTables(  # type: ignore[union-attr]
                num_envs, self.rules.num_players, opponents=spec[0], learner_seat=learner_seat,
                reward=reward, illegal_action_penalty=self.illegal_action_penalty,
                max_steps=max_steps, strategic_params=spec[1],
                same_step=mode == AutoresetMode.SAME_STEP, **rule_options)
            self._obs, self._masks = self._batch.obs, self._batch.masks  # written in place
            self.engine = "compiled"

    # ------------------------------------------------------------------ accessors
    @property
    def tables(self) -> list[LearnerSeat]:
        """Each table's :class:`~uno_mk_env.envs.learner.LearnerSeat`, the runner of the single
        wrapper env (its ``game``, learner ``seat``, ``opponents``, ``np_random``); step them
        only through this vector env. Python engine only.

        Raises:
            RuntimeError: the tables run on the compiled core (``engine == "compiled"``).
        """
        if self._batch is not None:
            raise RuntimeError("the tables run on the compiled core: their single envs are not "
                               "used (UNO_MK_ENGINE=python runs them)")
        return self._seats

    def games(self) -> list[Any]:
        """The engine of each table's current episode (hidden state included): a
        :class:`~uno_mk_env.Game`, or a copy of the compiled core's game (the same interface)."""
        if self._batch is not None:
            return [self._batch.game(i) for i in range(self.num_envs)]
        return [t.game for t in self._seats]

    def action_masks(self) -> np.ndarray:
        """``(N, 73)`` bool masks of each learner's legal actions (a copy; all ``False`` for a
        table whose episode ended and is not dealt again yet: ``NEXT_STEP``, ``DISABLED``)."""
        return self._masks.copy()  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deals a new game at every table (``seed``: table ``i`` is reseeded with
        ``seed + i``, or ``seed[i]`` for a sequence), or only at the tables of
        ``options["reset_mask"]`` (other options are unused).

        Raises:
            ValueError: a seed, or a ``reset_mask``, that is refused (see the module
                docstring); no table is changed.
        """
        mask = reset_mask(options, self.num_envs)
        seeds = reset_seeds(seed, self.num_envs)
        if not self._started and mask is not None and not mask.all():
            raise RuntimeError("the first reset() deals every table: call it without a "
                               "reset_mask")
        chosen = list(range(self.num_envs)) if mask is None else np.flatnonzero(mask).tolist()
        if self._batch is not None:
            self._batch.reset(seeds, chosen)
        else:
            self._deal(chosen, [seeds[i] for i in chosen])
        self._ended[chosen] = False
        self._started = True
        return self._obs.copy(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Plays each table's learner action and its opponents up to the learner's next
        decision; ended tables are dealt again as ``autoreset_mode`` says.

        Raises:
            TypeError: ``actions`` is not an integer array of shape ``(num_envs,)``.
            ValueError: an id outside 0-72.
            RuntimeError: before ``reset()``; with ``DISABLED``, a table whose episode ended
                and was not reset. Nothing is changed in any of these cases.
        """
        if not self._started:
            raise RuntimeError("reset() needs to be called before step()")
        acts = check_actions(actions, self.num_envs)
        mode = self.autoreset_mode
        if mode == AutoresetMode.DISABLED and self._ended.any():
            raise RuntimeError(
                f"tables {np.flatnonzero(self._ended).tolist()} ended (autoreset_mode DISABLED): "
                "deal them with reset(options={'reset_mask': mask}) before step()")
        if self._batch is not None:
            return self._step_compiled(acts)
        return self._step_python(acts.tolist())

    # ------------------------------------------------------------------ internals
    def _step_python(
        self, acts: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """:meth:`step` on the Python engine (the reference)."""
        mode = self.autoreset_mode
        dealing = np.flatnonzero(self._ended).tolist()  # NEXT_STEP: last step's ended tables
        seats = self._seats
        rewards = np.zeros(self.num_envs, np.float64)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        stepped = [i for i in range(self.num_envs) if not self._ended[i]]
        learner.step([seats[i] for i in stepped], [acts[i] for i in stepped])
        ended = []
        for i in stepped:
            t = seats[i]
            rewards[i] = t.reward
            if t.over:
                terminated[i] = t.game.game_over or t.illegal
                truncated[i] = not terminated[i]
                ended.append(i)
            else:
                self._observe(i)
        outcome = self._outcome(ended) if ended else {}
        if dealing:
            self._deal(dealing, [None] * len(dealing))
            self._ended[dealing] = False
        if mode == AutoresetMode.SAME_STEP:
            if ended:
                self._deal(ended, [None] * len(ended))
        else:
            for i in ended:
                t = seats[i]
                self._obs[i] = encode(t.game.view(t.seat))
                self._masks[i] = False
            self._ended[ended] = True
        infos = self._infos()
        if ended:
            self._add_outcome(infos, ended, outcome)
        return self._obs.copy(), rewards, terminated, truncated, infos

    def _step_compiled(
        self, acts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """:meth:`step` on the compiled core (the same results, written by the core)."""
        b = self._batch
        b.step(acts)
        flags = b.ended
        if self.autoreset_mode != AutoresetMode.SAME_STEP:
            self._ended[:] = flags
        infos = self._infos()
        if flags.any():
            ended = np.flatnonzero(flags).tolist()
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in ended:
                final_obs[i] = b.final_obs[i].copy()
            info = {"winner": np.where(flags, b.final_winner, -1),
                    "scores": np.where(flags[:, None], b.final_scores, 0),
                    "learner_seat": np.where(flags, b.final_seat, 0),
                    "illegal_action": flags & b.final_illegal}
            stats = {"r": np.where(flags, b.episode_return, 0.0),
                     "l": np.where(flags, b.episode_length, 0),
                     "place": np.where(flags, b.episode_place, 0)}
            self._add_outcome(infos, ended, {"final_obs": final_obs, "final_info": info,
                                             STATS_KEY: stats})
        return (self._obs.copy(), b.rewards.copy(), b.terminated.copy(), b.truncated.copy(),
                infos)

    def _deal(self, indices: list[int], seeds: Sequence[int | None]) -> None:
        """New episodes at the tables ``indices`` (``seeds``: reseed each table's generator, as
        the single env's ``reset(seed=...)``), up to their learner's first decision."""
        seats = self._seats
        for i, seed in zip(indices, seeds):
            seats[i].start(seed)
        learner.deal([seats[i] for i in indices])
        for i in indices:
            self._observe(i)

    def _observe(self, i: int) -> None:
        t = self._seats[i]
        view = t.game.view(t.seat)
        self._obs[i] = encode(view)
        mask = self._masks[i]
        mask[:] = False
        mask[list(view.legal_actions)] = True

    def _infos(self) -> dict[str, Any]:
        seats = (self._batch.seats.copy() if self._batch is not None
                 else np.array([t.seat for t in self._seats], np.int64))
        return {"action_mask": self._masks.astype(np.int8), "learner_seat": seats}

    def _outcome(self, ended: list[int]) -> dict[str, Any]:
        """The ended episodes' last observation, outcome and statistics (before any deal)."""
        num, n = self.num_envs, self.rules.num_players
        final_obs = np.full(num, None, dtype=object)
        info = {"winner": np.full(num, -1, np.int64), "scores": np.zeros((num, n), np.int64),
                "learner_seat": np.zeros(num, np.int64), "illegal_action": np.zeros(num, bool)}
        stats = {"r": np.zeros(num, np.float64), "l": np.zeros(num, np.int64),
                 "place": np.zeros(num, np.int64)}
        for i in ended:
            t = self._seats[i]
            game = t.game
            final_obs[i] = encode(game.view(t.seat))
            winner = game.winner if game.game_over else None
            info["winner"][i] = -1 if winner is None else winner
            info["scores"][i] = game.scores
            info["learner_seat"][i] = t.seat
            info["illegal_action"][i] = t.illegal
            stats["r"][i] = t.ret
            stats["l"][i] = t.length
            stats["place"][i] = episode_places(game)[t.seat]
        return {"final_obs": final_obs, "final_info": info, STATS_KEY: stats}

    def _add_outcome(self, infos: dict[str, Any], ended: list[int],
                     outcome: dict[str, Any]) -> None:
        """Puts the ended episodes' ``outcome`` in ``infos`` where ``autoreset_mode`` says."""
        flags = np.zeros(self.num_envs, bool)
        flags[ended] = True
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            infos.update({"final_obs": outcome["final_obs"], "_final_obs": flags,
                          "final_info": outcome["final_info"], "_final_info": flags.copy()})
        else:  # the ended tables' learner_seat is already the ended episodes' (not dealt yet)
            for key in ("winner", "scores", "illegal_action"):
                infos[key] = outcome["final_info"][key]
                infos[f"_{key}"] = flags.copy()
        infos[STATS_KEY] = outcome[STATS_KEY]
        infos[f"_{STATS_KEY}"] = flags.copy()
