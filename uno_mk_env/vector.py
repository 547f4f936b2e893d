"""Batched environments: N tables stepped in one process, for fast training.

:class:`UnoMarioKartVectorEnv`
    A Gymnasium ``VectorEnv``: one learning seat at each of ``num_envs`` tables, the other seats
    played by opponents inside :meth:`~UnoMarioKartVectorEnv.step`, exactly as
    :class:`uno_mk_env.gym_env.UnoMarioKartGymEnv` plays them: seed for seed, table ``i`` gives
    the trajectory of a single wrapper env reset with ``seed + i`` (and stepped with the same
    actions; the oracle test checks it). Opponents that are policies (:class:`BatchedAgent`:
    self-play snapshots, ``.npz`` agents) are decided in one forward pass over every table
    waiting on the same network; rule-based opponents table by table.

:class:`SelfPlayVectorEnv`
    Every seat of every table is the learner (pure self-play): :meth:`~SelfPlayVectorEnv.step`
    applies the deciding seat's action at each table and returns the next decider's
    observation, with the reward every seat got from that step.

Action Space
    ``MultiDiscrete([73] * num_envs)``: an ``(N,)`` integer array, one action id per table.
    :meth:`~UnoMarioKartVectorEnv.action_masks` gives the ``(N, 73)`` bool masks of the legal
    ones; ``infos["action_mask"]`` holds the same as ``int8`` (the single env's type).

Observation Space
    ``Box(0, high, (N, 437), float32)``: :func:`uno_mk_env.observation.encode` of each learner's
    view.

Rewards, Episode End
    As the single wrapper env (``reward="win"`` or ``"points"``; an illegal learner action ends
    the episode with ``illegal_action_penalty``; truncation after ``max_steps`` decisions).

Autoreset
    ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``): a table whose episode ended
    is dealt again inside the same ``step``; its row of the returned observation (and mask) is
    the new episode's first, and ``infos["final_obs"]`` (an object array) and
    ``infos["final_info"]`` (``winner`` (−1: none), ``scores``, ``learner_seat``,
    ``illegal_action``) hold the ended one's, with the masks ``_final_obs``/``_final_info``.
    ``infos["episode"]`` (mask ``_episode``) gives the ended episode's return ``r``, length
    ``l`` (learner decisions) and the learner's place ``place`` (1 = first; the winner, then
    score descending, then hand points ascending, equal keys sharing the better place: the
    tournaments' ranking).

Arguments
    ``num_envs``; ``num_players``; ``opponents``: ``None`` (uniformly random legal actions from
    each table's generator, as the single env), or a callable ``table_index ->`` what the single
    env takes as ``opponents`` (one policy, or ``num_players - 1`` policies, or ``None``),
    called once per table so that tables do not share stateful opponents (sharing one object
    between tables is allowed, but then its random stream interleaves across tables);
    ``learner_seat``, ``reward``, ``illegal_action_penalty``, ``max_steps`` and the rule
    options as the single env. No rendering.

Version History
    v0: initial release.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from . import actions as A
from .env import DEFAULT_MAX_STEPS, check_env_options
from .game import Game, IllegalActionError
from .gym_env import UnoMarioKartGymEnv
from .observation import OBS_SIZE, action_mask, encode, observation_high
from .rewards import round_rewards
from .rules import Rules

__all__ = ["BatchedAgent", "BatchedPolicy", "SelfPlayVectorEnv", "UnoMarioKartVectorEnv",
           "place_of"]

NUM_ACTIONS = A.NUM_ACTIONS
_KEEP = A.KEEP


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


def place_of(seat: int, winner: int | None, scores: Sequence[int],
             hand_points: Sequence[int]) -> int:
    """``seat``'s place (1 = first): the winner, then score descending, then hand points
    ascending; equal keys share the better place (the tournaments' ranking)."""
    keys = [(s != winner, -scores[s], hand_points[s]) for s in range(len(scores))]
    return 1 + sum(other < keys[seat] for other in keys)


class _Table(UnoMarioKartGymEnv):
    """One table: a single wrapper env whose bookkeeping the vector env reuses (``_after_step``:
    the learner's reward, the step count, the episode's end), so both count and cut episodes
    alike; the vector env deals (:meth:`_Tables.deal`) and drives its opponents."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ret = 0.0  # the episode's return so far
        self.length = 0  # the learner's decisions so far
        self.reward = 0.0  # the learner's reward of the current step
        self.illegal = False


class _Tables:
    """The opponents' side of every table: dealing and batched opponent play. Each method
    follows :class:`uno_mk_env.gym_env.UnoMarioKartGymEnv` step for step (the same generator
    draws in the same order), so a table reproduces a single env."""

    def __init__(self, tables: list[_Table]) -> None:
        self.tables = tables

    def deal(self, indices: Sequence[int], seeds: Sequence[int | None]) -> None:
        """New episodes at ``indices`` (``seeds``: reseed the table's generator, and then its
        agents, as the single env's ``reset(seed=...)``), played up to the learner's first
        decision; a deal that ends before it is replaced."""
        for i, seed in zip(indices, seeds):
            t = self.tables[i]
            gymnasium.Env.reset(t, seed=seed)  # seeds np_random as the single env's reset
            agents = {id(p): p for p in t.opponents if p is not None and hasattr(p, "reset")}
            for agent in agents.values():
                agent.reset(None if seed is None else int(t.np_random.integers(2**63)))
        todo = list(indices)
        while todo:
            for i in todo:
                t = self.tables[i]
                rng = t.np_random
                t._seat = t.learner_seat if t.learner_seat is not None else int(
                    rng.integers(t.rules.num_players))
                t._game = Game(t.rules, seed=int(rng.integers(2**63)))
                t._steps = 0
                t._over = t.illegal = False
                t.ret = 0.0
                t.length = 0
            self.play_opponents(todo)
            todo = [i for i in todo if self.tables[i]._over]

    @staticmethod
    def _advance(t: _Table) -> Any:
        """Plays ``t``'s opponents one by one until the learner decides, the episode ends or a
        batched opponent is to decide (returned, else ``None``); their reward goes to
        ``t.reward``."""
        game = t.game
        me = t._seat
        n = t.rules.num_players
        while not t._over and game.current_player != me:
            p = game.current_player
            policy = t.opponents[(p - me) % n - 1]
            batched = getattr(policy, "batched_policy", None)  # BatchedAgent, duck-typed
            if batched is not None and batched() is not None:
                return policy
            action = t._opponent_action(game, p, policy)
            game.step(action)
            t.reward += t._after_step(action)
        return None

    def play_opponents(self, indices: Sequence[int]) -> None:
        """Plays the opponents of the tables ``indices`` up to their learner's decisions (or
        the episode's end); each round of batched opponents is one forward pass per network."""
        pending = list(indices)
        while pending:
            waiting: dict[int, list[tuple[int, Any]]] = {}
            networks: dict[int, Any] = {}
            for i in pending:
                agent = self._advance(self.tables[i])
                if agent is not None:
                    net = agent.batched_policy()
                    networks[id(net)] = net
                    waiting.setdefault(id(net), []).append((i, agent))
            pending = []
            for key, group in waiting.items():
                games = [self.tables[i].game for i, _ in group]
                views = [g.view(g.current_player) for g in games]
                logits = networks[key].logits(np.stack([encode(v) for v in views]))
                for (i, agent), game, view, row in zip(group, games, views, logits):
                    legal = view.legal_actions
                    action = agent.choose(row, action_mask(legal))
                    if action not in legal:
                        raise IllegalActionError(
                            f"opponent {agent!r} at seat {view.seat} returned an illegal action "
                            f"{action!r} (legal: {list(legal)})")
                    action = int(action)
                    game.step(action)
                    t = self.tables[i]
                    t.reward += t._after_step(action)
                    pending.append(i)


def _reset_seeds(seed: int | Sequence[int] | None, n: int) -> list[int | None]:
    if seed is None:
        return [None] * n
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)  # type: ignore[arg-type]  # a bool is refused below, as not n seeds
    if len(seeds) != n:
        raise ValueError(f"seed must be an int, None or {n} seeds (one per table), got "
                         f"{len(seeds)}")
    return [None if s is None else int(s) for s in seeds]


def _check_actions(actions: Any, n: int) -> list[int]:
    a = np.asarray(actions)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise TypeError(f"actions must be an integer array of shape ({n},), got "
                        f"{a.dtype} of shape {a.shape}")
    if n and (a.min() < 0 or a.max() >= NUM_ACTIONS):
        raise ValueError(f"actions must be ids 0-{NUM_ACTIONS - 1}, got values "
                         f"{a.min()}..{a.max()}")
    return [int(x) for x in a.tolist()]


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
        **rule_options: Any,
    ) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        check_env_options(reward, max_steps, None)
        if opponents is not None and not callable(opponents):
            raise TypeError("opponents must be None or a callable table_index -> opponents, got "
                            f"{type(opponents).__name__}")
        self.num_envs = num_envs
        self.reward_mode = reward
        self.max_steps = max_steps
        self.learner_seat = learner_seat
        # Each table is checked (learner_seat, the rule options...) as the single env checks.
        tables = [_Table(num_players, None if opponents is None else opponents(i), learner_seat,
                         reward, illegal_action_penalty, max_steps, **rule_options)
                  for i in range(num_envs)]
        self.illegal_action_penalty = tables[0].illegal_action_penalty
        self._tables = _Tables(tables)
        self.rules = tables[0].rules
        self.single_observation_space = gymnasium.spaces.Box(
            0.0, observation_high(self.rules), (OBS_SIZE,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, num_envs)
        self.action_space = gymnasium.spaces.MultiDiscrete(np.full(num_envs, NUM_ACTIONS))
        self._obs = np.zeros((num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((num_envs, NUM_ACTIONS), bool)
        self._started = False

    # ------------------------------------------------------------------ accessors
    @property
    def tables(self) -> list[_Table]:
        """Each table, a single wrapper env (its ``game``, learner ``seat``, ``opponents``,
        ``np_random``); step them only through this vector env."""
        return self._tables.tables

    def games(self) -> list[Game]:
        """The engine of each table's current episode (hidden state included)."""
        return [t.game for t in self._tables.tables]

    def action_masks(self) -> np.ndarray:
        """``(N, 73)`` bool masks of each learner's legal actions (a copy)."""
        return self._masks.copy()  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deals a new game at every table (``seed``: table ``i`` is reseeded with
        ``seed + i``, or ``seed[i]`` for a list); ``options`` is unused."""
        seeds = _reset_seeds(seed, self.num_envs)
        everyone = list(range(self.num_envs))
        self._tables.deal(everyone, seeds)
        for i in everyone:
            self._observe(i)
        self._started = True
        return self._obs.copy(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Plays each table's learner action and its opponents up to the learner's next
        decision; ended tables are dealt again (SAME_STEP autoreset).

        Raises:
            TypeError: ``actions`` is not an integer array of shape ``(num_envs,)``.
            ValueError: an id outside 0-72. Nothing is changed in either case.
        """
        if not self._started:
            raise RuntimeError("reset() needs to be called before step()")
        acts = _check_actions(actions, self.num_envs)
        tables = self._tables.tables
        rewards = np.zeros(self.num_envs, np.float64)
        playing = []
        for i, (t, a) in enumerate(zip(tables, acts)):
            t.reward = 0.0
            try:
                t.game.step(a)
            except IllegalActionError:
                t._over = t.illegal = True
                t.reward = self.illegal_action_penalty
                continue
            t.reward += t._after_step(a)
            if not t._over:
                playing.append(i)
        self._tables.play_opponents(playing)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        ended = []
        for i, t in enumerate(tables):
            rewards[i] = t.reward
            t.ret += t.reward
            t.length += 1
            if t._over:
                terminated[i] = t.game.game_over or t.illegal
                truncated[i] = not terminated[i]
                ended.append(i)
            else:
                self._observe(i)
        final = self._final(ended) if ended else None
        if ended:
            self._tables.deal(ended, [None] * len(ended))
            for i in ended:
                self._observe(i)
        infos = self._infos()
        if final is not None:
            infos.update(final)
        return self._obs.copy(), rewards, terminated, truncated, infos

    # ------------------------------------------------------------------ internals
    def _observe(self, i: int) -> None:
        t = self._tables.tables[i]
        view = t.game.view(t._seat)
        self._obs[i] = encode(view)
        mask = self._masks[i]
        mask[:] = False
        mask[list(view.legal_actions)] = True

    def _infos(self) -> dict[str, Any]:
        return {"action_mask": self._masks.astype(np.int8),
                "learner_seat": np.array([t._seat for t in self._tables.tables], np.int64)}

    def _final(self, ended: list[int]) -> dict[str, Any]:
        """The ended episodes' last observation, outcome and statistics (before re-dealing)."""
        num, n = self.num_envs, self.rules.num_players
        final_obs = np.full(num, None, dtype=object)
        flags = np.zeros(num, bool)
        flags[ended] = True
        info = {"winner": np.full(num, -1, np.int64), "scores": np.zeros((num, n), np.int64),
                "learner_seat": np.zeros(num, np.int64), "illegal_action": np.zeros(num, bool)}
        episode = {"r": np.zeros(num, np.float64), "l": np.zeros(num, np.int64),
                   "place": np.zeros(num, np.int64)}
        for i in ended:
            t = self._tables.tables[i]
            game = t.game
            final_obs[i] = encode(game.view(t._seat))
            winner = game.winner if game.game_over else None
            info["winner"][i] = -1 if winner is None else winner
            info["scores"][i] = game.scores
            info["learner_seat"][i] = t._seat
            info["illegal_action"][i] = t.illegal
            episode["r"][i] = t.ret
            episode["l"][i] = t.length
            episode["place"][i] = place_of(t._seat, winner, game.scores,
                                           [game.hand_points(s) for s in range(n)])
        return {"final_obs": final_obs, "_final_obs": flags, "final_info": info,
                "_final_info": flags.copy(), "episode": episode, "_episode": flags.copy()}


class SelfPlayVectorEnv:
    """Every seat of ``num_envs`` tables is the learner (pure self-play), for trainers that
    batch all seats.

    :meth:`reset` and :meth:`step` return the observation ``(N, 437)`` and mask ``(N, 73)`` of
    each table's deciding seat (``infos["seat"]``); :meth:`step` takes that seat's action and
    returns the reward *every* seat got from it, ``(N, num_players)`` (the ``win`` reward
    arrives at the game's end, so a seat's return is the sum over the steps after each of its
    decisions), with ``terminated``/``truncated`` per table and SAME_STEP autoreset as
    :class:`UnoMarioKartVectorEnv` (``final_info``: ``winner``, ``scores``; ``episode``:
    ``l``, the decisions of all seats, a ``KEEP`` not counted, as for ``max_steps``). Illegal
    actions raise :class:`~uno_mk_env.IllegalActionError` (a trainer masks them). Seed for
    seed, table ``i`` reset with ``seed`` plays the games of the AEC env (``raw_env``) reset
    with ``seed + i``, and then reset without a seed after each game (the oracle test).
    """

    def __init__(self, num_envs: int, num_players: int = 2, reward: str = "win",
                 max_steps: int | None = DEFAULT_MAX_STEPS, **rule_options: Any) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
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
        self._games: list[Game] = []  # dealt by reset()
        self._steps = [0] * num_envs
        self._obs = np.zeros((num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((num_envs, NUM_ACTIONS), bool)
        self._seats = np.zeros(num_envs, np.int64)

    def games(self) -> list[Game]:
        """The engine of each table (hidden state included)."""
        return list(self._games)

    def action_masks(self) -> np.ndarray:
        """``(N, 73)`` bool masks of each deciding seat's legal actions (a copy)."""
        return self._masks.copy()  # type: ignore[no-any-return]

    def reset(self, *, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray,
                                                                          dict[str, Any]]:
        for i, s in enumerate(_reset_seeds(seed, self.num_envs)):
            if s is not None:
                self._rngs[i] = seeding.np_random(s)[0]
        self._games = [self._new_game(i) for i in range(self.num_envs)]
        for i in range(self.num_envs):
            self._steps[i] = 0
            self._observe(i)
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
        if not self._games:
            raise RuntimeError("reset() needs to be called before step()")
        acts = _check_actions(actions, self.num_envs)
        num, n = self.num_envs, self.num_players
        rewards = np.zeros((num, n), np.float64)
        terminated = np.zeros(num, bool)
        truncated = np.zeros(num, bool)
        ended = []
        for i, a in enumerate(acts):
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
            final = {"final_info": info, "_final_info": flags, "episode": {"l": lengths},
                     "_episode": flags.copy()}
        infos = self._infos()
        if final is not None:
            infos.update(final)
        return self._obs.copy(), rewards, terminated, truncated, infos
