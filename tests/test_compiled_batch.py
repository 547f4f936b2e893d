"""The compiled core's batched tables (docs/compiled.md) against a Python
reference driver: the same seeds and learner actions give the same games, observations, masks,
rewards and episode ends, and the core's ``random``/``greedy``/``strategic`` opponents choose
exactly what the Python agents (``agents/rule_based.py``, ``agents/base.py``) choose.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from tests.test_compiled_lockstep import load_core
from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents.base import RandomAgent
from uno_mk_env.agents.rule_based import GreedyAgent, StrategicAgent, StrategicParams
from uno_mk_env.engine.observation import action_mask, encode
from uno_mk_env.engine.phases import Phase
from uno_mk_env.engine.rewards import round_rewards
from uno_mk_env.errors import IllegalActionError

core = load_core()
AGENTS = {"random": RandomAgent, "greedy": GreedyAgent, "strategic": StrategicAgent}


class RefTable:
    """One table as the vector env plays it, on the Python engine and the Python agents."""

    def __init__(self, rules: Rules, opponents: str | None, seed: int, learner_seat: int | None,
                 reward: str, max_steps: int | None) -> None:
        self.rules, self.learner_seat, self.reward, self.max_steps = (
            rules, learner_seat, reward, max_steps)
        self.rng = np.random.default_rng(seed)
        self.agent = None if opponents is None else AGENTS[opponents]()
        if self.agent is not None:
            self.agent.reset(int(self.rng.integers(2**63)))
        self.deal()

    def deal(self) -> None:
        while True:
            n = self.rules.num_players
            self.seat = (self.learner_seat if self.learner_seat is not None
                         else int(self.rng.integers(n)))
            self.game = Game(self.rules, seed=int(self.rng.integers(2**63)), event_log="recent")
            self.steps, self.over = 0, False
            self.play_opponents()
            if not self.over:
                return

    def after_step(self, action: int) -> float:
        g = self.game
        self.steps += action != A.KEEP
        reward = round_rewards(g, self.reward)[self.seat] if g.round_over else 0.0
        if g.game_over or (self.max_steps is not None and self.steps >= self.max_steps
                           and g.phase != Phase.PLAY_DRAWN):
            self.over = True
        return reward

    def play_opponents(self) -> float:
        total = 0.0
        g = self.game
        while not self.over and g.current_player != self.seat:
            legal = g.legal_action_ids()
            if self.agent is None:
                action = legal[int(self.rng.random() * len(legal))]
            else:
                action = self.agent.act(None, action_mask(legal), g.view(g.current_player))
            g.step(action)
            total += self.after_step(action)
        return total

    def step(self, action: int) -> tuple[float, bool, bool]:
        if action not in self.game.legal_action_ids():
            reward, illegal = -1.0, True
            self.over = True
        else:
            illegal = False
            self.game.step(action)
            reward = self.after_step(action)
            if not self.over:
                reward += self.play_opponents()
        terminated = truncated = False
        if self.over:
            terminated = self.game.game_over or illegal
            truncated = not terminated
            if self.agent is not None:
                self.agent.reset(None)
            self.deal()
        return reward, terminated, truncated


def same_table(b: Any, i: int, ref: RefTable) -> None:
    assert b.game(i).to_dict() == ref.game.to_dict()
    assert b.seats[i] == ref.seat
    assert np.array_equal(b.obs[i], encode(ref.game.view(ref.seat)))
    assert np.array_equal(b.masks[i], ref.game.legal_actions())


@pytest.mark.parametrize("n", [2, 3, 4, 6, 10])
@pytest.mark.parametrize("opponents", [None, "random", "greedy", "strategic"])
def test_batched_tables_match_the_python_driver(opponents: str | None, n: int) -> None:
    num, seed = 4, 20 + n
    options: dict[str, Any] = {} if n != 3 else {"uno_catch": "any_player", "w4_strict": True}
    reward = "points" if n == 4 else "win"
    max_steps = 60 if n == 6 else None
    b = core.BatchedTables(num, num_players=n, opponents=opponents, reward=reward,
                           max_steps=max_steps, **options)
    b.reset(seed=seed)
    rules = Rules(num_players=n, **options)
    refs = [RefTable(rules, opponents, seed + i, None, reward, max_steps) for i in range(num)]
    pick = np.random.default_rng(n)
    ends = 0
    for t in range(250):
        for i, ref in enumerate(refs):
            same_table(b, i, ref)
        actions = []
        for i in range(num):
            legal = np.flatnonzero(b.masks[i])
            illegal = t % 97 == 13 and i == 0  # now and then an illegal action: the penalty
            actions.append(int(np.flatnonzero(~b.masks[i])[0]) if illegal
                           else int(legal[pick.integers(len(legal))]))
        b.step(np.array(actions))
        for i, ref in enumerate(refs):
            reward, terminated, truncated = ref.step(actions[i])
            assert b.rewards[i] == reward
            assert (b.terminated[i], b.truncated[i]) == (terminated, truncated)
            assert b.ended[i] == (terminated or truncated)
            ends += terminated or truncated
    assert ends > 0


def test_self_play_tables_match_the_python_driver() -> None:
    n, num, seed = 3, 3, 5
    b = core.BatchedTables(num, num_players=n, self_play=True, reward="points", max_steps=80)
    b.reset(seed=seed)
    rngs = [np.random.default_rng(seed + i) for i in range(num)]
    games = [Game(Rules(num_players=n), seed=int(r.integers(2**63))) for r in rngs]
    steps = [0] * num
    pick = np.random.default_rng(1)
    for _ in range(300):
        actions = []
        for i, g in enumerate(games):
            assert b.game(i).to_dict() == g.to_dict()
            assert b.seats[i] == g.current_player
            assert np.array_equal(b.obs[i], encode(g.view(g.current_player)))
            legal = g.legal_action_ids()
            actions.append(legal[int(pick.integers(len(legal)))])
        b.step(np.array(actions))
        for i, g in enumerate(games):
            g.step(actions[i])
            steps[i] += actions[i] != A.KEEP
            rewards = round_rewards(g, "points") if g.round_over else [0.0] * n
            assert list(b.rewards[i]) == rewards
            truncated = not g.game_over and steps[i] >= 80 and g.phase != Phase.PLAY_DRAWN
            assert (b.terminated[i], b.truncated[i]) == (g.game_over, truncated)
            if g.game_over or truncated:
                games[i] = Game(Rules(num_players=n), seed=int(rngs[i].integers(2**63)))
                steps[i] = 0
    with pytest.raises(IllegalActionError, match="table 0: illegal action"):
        b.step(np.array([int(np.flatnonzero(~b.masks[i])[0]) for i in range(num)]))


def test_strategic_defaults_are_the_python_agents() -> None:
    assert core.STRATEGIC_DEFAULTS == dataclasses.asdict(StrategicParams())
    assert core.GREEDY_CHALLENGE_HAND == GreedyAgent().challenge_hand


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        core.BatchedTables(0)
    with pytest.raises(ValueError, match="opponent 'ppo' is not allowed"):
        core.BatchedTables(2, opponents="ppo")
    with pytest.raises(ValueError, match="learner_seat must be None or a seat 0-1"):
        core.BatchedTables(2, learner_seat=2)
    b = core.BatchedTables(2)
    with pytest.raises(RuntimeError, match=r"reset\(\) needs to be called"):
        b.step(np.zeros(2, np.int64))
    b.reset(seed=1)
    with pytest.raises(TypeError, match=r"shape \(2,\)"):
        b.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="ids 0-72"):
        b.step(np.array([0, 99]))
