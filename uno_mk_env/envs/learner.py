"""One learner seat's episodes at one table: the runner that the Gymnasium wrapper
(:class:`uno_mk_env.envs.gym_env.UnoMarioKartGymEnv`) and every table of the vector env
(:class:`uno_mk_env.envs.vector.UnoMarioKartVectorEnv`, Python engine) drive, so that a vector
table is a single env by construction.

A :class:`LearnerSeat` holds the episode: the game, the learner's seat, the opponents and the
table's generator, and the bookkeeping of every step, whichever seat took it: the learner's
reward (:func:`~uno_mk_env.engine.rewards.round_rewards`), the step cap
(:meth:`~uno_mk_env.engine.play.Play.at_step_cap`, a ``KEEP`` not counted) and the episode's
end. Three functions move any number of seats at once: :func:`deal` (new episodes, up to each
learner's first decision), :func:`step` (each learner's action, then its opponents up to its
next decision) and, inside both, :func:`play_opponents`, where opponents whose next decision is
a network's (``batched_policy()``, :class:`uno_mk_env.envs.vector.BatchedAgent`) are decided in
one forward pass per network over every seat waiting on it, when the seats are ``batched`` (the
vector env's; the wrapper asks each opponent's ``act``, which gives the same action).

A seat's generator draws, in this order: at :meth:`LearnerSeat.start`, each agent opponent's
reset seed (only when a seed was given); at each deal, the learner's seat (unless it is fixed)
and the game's seed; then the uniformly random opponents' choices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from ..engine import actions as A
from ..engine.game import Game, IllegalActionError
from ..engine.observation import action_mask, encode
from ..engine.rewards import round_rewards
from ..engine.rules import Rules
from ..render.text import RecentDecisions
from .aec import check_reward_value
from .agent import AgentError, agent_action

__all__ = ["LearnerSeat", "Policy", "ask_opponent", "deal", "parse_opponents",
           "play_opponents", "step"]

Policy = Any  # an agent with .act(observation, action_mask, view) or a callable (obs, mask)

_KEEP = A.KEEP


class LearnerSeat:
    """One learner seat at one table, episode after episode (see the module docstring).

    Arguments are the single env's (:class:`~uno_mk_env.envs.gym_env.UnoMarioKartGymEnv`),
    checked as it documents; ``batched``: the opponents' network decisions wait for
    :func:`play_opponents` to batch them; ``history``: the decisions to record for rendering
    (its ``start`` at each deal, ``before``/``after`` around every step).

    Attributes:
        game: The current episode's engine (hidden state included).
        seat: The learner's seat in the current episode.
        steps: Public decisions of every seat this episode (what ``max_steps`` caps).
        over: No episode is in play: it has ended (game over, step cap or illegal action), or
            none was dealt yet.
        illegal: It ended with an illegal action of the learner.
        reward: The learner's reward of the current step: its own action and the opponents'
            turns up to its next decision (the penalty after an illegal action).
        ret: The episode's return so far; ``length``: the learner's decisions so far.
        np_random: The table's generator (``None`` before the first :meth:`start`).

    Raises:
        ValueError: a ``learner_seat`` that is not ``None`` nor a seat (a ``bool`` refused),
            ``opponents`` of the wrong number, a bad ``illegal_action_penalty``.
        TypeError: an opponent that is not ``None``, an agent or a callable.
    """

    def __init__(self, rules: Rules, opponents: Policy | Sequence[Policy] | None,
                 learner_seat: int | None, reward: str, illegal_action_penalty: float,
                 max_steps: int | None, *, batched: bool = False,
                 history: RecentDecisions | None = None) -> None:
        n = rules.num_players
        if learner_seat is not None and (
            not isinstance(learner_seat, int) or isinstance(learner_seat, bool)
            or not 0 <= learner_seat < n
        ):
            raise ValueError(f"learner_seat must be None or a seat 0-{n - 1}, got {learner_seat!r}")
        self.opponents = parse_opponents(opponents, n)
        self.illegal_action_penalty = check_reward_value(
            "illegal_action_penalty", illegal_action_penalty)
        self.rules = rules
        self.learner_seat = learner_seat
        self.reward_mode = reward
        self.max_steps = max_steps
        self.batched = batched
        self.history = history
        self.np_random: np.random.Generator | None = None
        self._game: Game | None = None
        self.seat = 0
        self.steps = 0
        self.over = True  # until the first deal
        self.illegal = False
        self.reward = self.ret = 0.0
        self.length = 0

    @property
    def game(self) -> Game:
        """The current episode's engine (hidden state included)."""
        if self._game is None:
            raise RuntimeError("reset() needs to be called first")
        return self._game

    @property
    def dealt(self) -> bool:
        """A game has been dealt (the first reset is done)."""
        return self._game is not None

    def start(self, seed: int | None, rng: np.random.Generator | None = None) -> None:
        """Begins a new episode (:func:`deal` then deals it): its generator is ``rng`` when
        given (the Gymnasium wrapper's, which its ``reset`` has just reseeded), else the seat's
        own, reseeded with ``seed`` as ``gymnasium.Env.reset`` does (kept when ``None``); with a
        seed, each agent among the opponents is reset with a seed drawn from it (else with
        ``None``)."""
        if rng is None:
            rng = self.np_random
            if seed is not None or rng is None:
                rng = seeding.np_random(seed)[0]
        self.np_random = rng
        agents = {id(p): p for p in self.opponents if p is not None and hasattr(p, "reset")}
        for agent in agents.values():
            agent.reset(None if seed is None else int(rng.integers(2**63)))

    def _deal_one(self) -> None:
        """A new game: the learner's seat (drawn unless fixed), then the game's seed."""
        rng = self.np_random
        assert rng is not None  # start() made it
        self.seat = self.learner_seat if self.learner_seat is not None else int(
            rng.integers(self.rules.num_players))
        self._game = game = Game(self.rules, seed=int(rng.integers(2**63)))
        self.steps = 0
        self.over = self.illegal = False
        self.reward = self.ret = 0.0
        self.length = 0
        if self.history is not None:
            self.history.start(game)

    def _act(self, action: int) -> bool:
        """The learner's ``action``: ``True`` when its opponents are to play next, ``False``
        when the episode ended (an illegal action: :attr:`illegal`, the penalty as reward)."""
        game = self._game
        assert game is not None  # dealt: the callers check over
        self.reward = 0.0
        history = self.history
        if history is not None:
            history.before(game)
        try:
            game.step(action)
        except IllegalActionError:
            self.over = self.illegal = True
            self.reward = self.illegal_action_penalty
            return False
        if history is not None:
            history.after(action)
        self._count(game, action)
        return not self.over

    def _play(self, game: Game, action: int) -> None:
        """An opponent's ``action`` in ``game`` (this seat's)."""
        history = self.history
        if history is not None:
            history.before(game)
        game.step(action)
        if history is not None:
            history.after(action)
        self._count(game, action)

    def _count(self, game: Game, action: int) -> None:
        """Bookkeeping after any seat's step in ``game`` (this seat's): the learner's reward,
        the episode's end (``max_steps`` counts public decisions: not a ``KEEP``, as the AEC
        env)."""
        self.steps += action != _KEEP
        if game.round_over:
            self.reward += round_rewards(game, self.reward_mode)[self.seat]
        if game.game_over or game.at_step_cap(self.max_steps, self.steps):
            self.over = True

    def step_alone(self, action: int) -> None:
        """:func:`step` for this one seat when it is not :attr:`batched` (the Gymnasium
        wrapper's): the same calls, without the lists that batching needs."""
        if self._act(action):
            self._advance()  # not batched: plays every opponent up to the learner
        self._close_step()

    def _close_step(self) -> None:
        """The learner's decision is done: its reward joins the return, the length counts it."""
        self.ret += self.reward
        self.length += 1

    def _advance(self) -> tuple[Any, Any] | None:
        """Plays the opponents one by one until the learner decides, the episode ends or (when
        :attr:`batched`) an opponent's network is to decide: ``(agent, network)``, else
        ``None``."""
        game = self._game
        assert game is not None  # dealt
        me = self.seat
        n = self.rules.num_players
        opponents = self.opponents
        batching = self.batched
        while not self.over and game.current_player != me:
            p = game.current_player
            policy = opponents[(p - me) % n - 1]
            if batching:
                batched = getattr(policy, "batched_policy", None)  # BatchedAgent, duck-typed
                net = None if batched is None else batched()
                if net is not None:
                    return policy, net
            legal = game.legal_action_ids()
            if policy is None:  # uniform over the legal ones, from the table's generator
                rng = self.np_random
                assert rng is not None  # start() made it
                action = legal[int(rng.random() * len(legal))]
            else:
                action = ask_opponent(policy, game, p, legal)
            self._play(game, action)
        return None


def deal(seats: Sequence[LearnerSeat]) -> None:
    """New episodes at ``seats`` (each :meth:`~LearnerSeat.start` ed), played up to each
    learner's first decision; a deal whose episode ends before it is replaced by another."""
    todo = list(seats)
    while todo:
        for seat in todo:
            seat._deal_one()
        play_opponents(todo)
        todo = [seat for seat in todo if seat.over]


def step(seats: Sequence[LearnerSeat], actions: Sequence[int]) -> None:
    """Plays each seat's learner action (an id 0-72; an illegal one ends the episode), then the
    opponents of those whose episode goes on, up to their learner's next decision; each seat's
    ``reward`` is then the step's, added to ``ret``, and ``length`` counts the decision."""
    moving = []
    for seat, action in zip(seats, actions):
        if seat._act(action):
            moving.append(seat)
    play_opponents(moving)
    for seat in seats:
        seat._close_step()


def play_opponents(seats: Iterable[LearnerSeat]) -> None:
    """Plays the opponents at ``seats`` up to their learner's decisions (or their episode's
    end); each round of batched opponents is one forward pass per network."""
    pending = list(seats)
    while pending:
        waiting: dict[int, tuple[Any, list[tuple[LearnerSeat, Any]]]] = {}  # id(net): net, seats
        for seat in pending:
            due = seat._advance()
            if due is not None:
                agent, net = due
                waiting.setdefault(id(net), (net, []))[1].append((seat, agent))
        pending = []
        for net, group in waiting.values():
            views = [s.game.view(s.game.current_player) for s, _ in group]
            logits = net.logits(np.stack([encode(v) for v in views]))
            for (seat, agent), view, row in zip(group, views, logits):
                legal = view.legal_actions
                action = agent.choose(row, action_mask(legal))
                if action not in legal:
                    raise IllegalActionError(
                        f"opponent {agent!r} at seat {view.seat} returned an illegal action "
                        f"{action!r} (legal: {list(legal)})")
                seat._play(seat.game, int(action))
                pending.append(seat)


def parse_opponents(opponents: Any, n: int) -> list[Policy | None]:
    """The ``n - 1`` opponents' policies, ``[i]`` sitting ``i + 1`` seats clockwise from the
    learner: ``None`` (uniformly random), one policy for every seat, or a sequence of them.

    Raises:
        ValueError: a sequence of the wrong length.
        TypeError: anything else than ``None``, an agent or a callable (or a sequence of them).
    """
    if opponents is None or hasattr(opponents, "act") or callable(opponents):
        return [opponents] * (n - 1)
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        policies = list(opponents)
        if len(policies) != n - 1:
            raise ValueError(
                f"opponents must hold num_players - 1 = {n - 1} policies, got {len(policies)}"
            )
        for p in policies:
            if p is not None and not hasattr(p, "act") and not callable(p):
                raise TypeError(
                    "each opponent must be an agent with .act(observation, action_mask, view)"
                    f" or a callable (observation, action_mask) -> action, got {p!r}"
                )
        return policies
    raise TypeError(
        "opponents must be None, an agent, a callable or a sequence of them, "
        f"got {type(opponents).__name__}"
    )


def ask_opponent(policy: Any, game: Game, seat: int, legal: tuple[int, ...]) -> int:
    """An opponent's decision, in the single env and the vector env alike: a plain callable
    ``(observation, mask) -> action`` is given the seat's observation and mask, an agent is asked
    through :func:`uno_mk_env.envs.agent.agent_action`.

    Raises:
        IllegalActionError: the opponent chose an illegal action (a bug in the opponent).
    """
    if getattr(policy, "act", None) is None:  # a plain callable (observation, mask)
        action = policy(encode(game.view(seat)), action_mask(legal))
        if action not in legal:
            raise IllegalActionError(f"opponent {policy!r} at seat {seat} returned an "
                                     f"illegal action {action!r} (legal: {list(legal)})")
        return int(action)
    try:
        return agent_action(policy, game, f"opponent {policy!r}")
    except AgentError as e:
        if e.__cause__ is None:  # an illegal choice, not an exception of the opponent's
            raise IllegalActionError(str(e)) from None
        raise
