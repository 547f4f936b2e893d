"""The learner-seat runner (uno_mk_env.envs.learner) is the one home of a learner's episode: the
Gymnasium wrapper and every table of the vector env's Python path run on it, so a vector table
is a single env by construction. These tests compare their whole state, step by step (the game
with its hidden cards, the learner's seat, the step count, the episode's end, the reward, the
return, the generator), over seeds, opponent kinds, step caps and illegal actions: the oracle
test (tests/test_vector.py) compares what the learner sees; this one fails as soon as the two
keep an episode differently, even where the learner cannot see it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from uno_mk_env import compiled
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine import actions as A
from uno_mk_env.engine.rules import Rules
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs import learner
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.envs.learner import LearnerSeat
from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

POLICY = "models/ppo_2p.npz"


def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


#: Opponent kinds, each a ``table_index -> opponents`` (fresh objects per call: the single env
#: and the vector table each get their own, with the same seeds).
OPPONENTS: dict[str, Callable[[int], Any] | None] = {
    "random": None,
    "rule-based": lambda i: [build_agent(spec, seed=derive_seed(7, i, s))
                             for s, spec in enumerate(["strategic", "greedy"])],
    "callable": lambda i: first_legal,
    "network": lambda i: [PPOAgent(POLICY, seed=derive_seed(8, i, s), deterministic=False)
                          for s in range(2)],
}


def state(seat: LearnerSeat) -> dict[str, Any]:
    """Everything a learner seat keeps of its episode."""
    assert seat.np_random is not None
    return {"game": seat.game.to_dict(), "seat": seat.seat, "steps": seat.steps,
            "over": seat.over, "illegal": seat.illegal, "reward": seat.reward, "ret": seat.ret,
            "length": seat.length, "rng": seat.np_random.bit_generator.state}


@pytest.mark.parametrize("kind", list(OPPONENTS))
@pytest.mark.parametrize(("max_steps", "reward", "rules", "seed"), [
    (24, "win", {}, 0), (None, "points", {"match": "fixed_rounds", "rounds": 2}, 5),
], ids=["capped", "whole"])
def test_a_vector_table_keeps_the_single_envs_episode(
        kind: str, max_steps: int | None, reward: str, rules: dict[str, Any], seed: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three players (two opponents of ``kind``), three tables against three single envs
    seeded ``seed + i``, stepped with the same actions (now and then an illegal one), each
    single env reset when its episode ends (the vector env deals again in the same step): the
    runner states are equal after every reset and step, and episodes end by the game, the step
    cap and illegal actions."""
    monkeypatch.setenv(compiled.ENGINE_VARIABLE, "python")
    num_envs = 3
    opponents = OPPONENTS[kind]
    kwargs: dict[str, Any] = dict(reward=reward, max_steps=max_steps, hand_size=2, **rules)
    venv = UnoMarioKartVectorEnv(num_envs, 3, opponents=opponents, **kwargs)
    envs = [UnoMarioKartGymEnv(3, opponents=None if opponents is None else opponents(i),
                               **kwargs) for i in range(num_envs)]
    assert venv.engine == "python"
    venv.reset(seed=seed)
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    rng = np.random.default_rng(seed)
    endings = {"game": 0, "cap": 0, "illegal": 0}
    for step in range(200):
        tables = venv.tables
        for table, env in zip(tables, envs):
            assert state(table) == state(env._learner)
        masks = venv.action_masks()
        # mostly the lowest legal id (a play when there is one: games end sooner), else random
        actions = np.array([np.flatnonzero(m)[0] if rng.random() < 0.8
                            else rng.choice(np.flatnonzero(m)) for m in masks])
        if step % 29 == 28:
            actions[step % num_envs] = np.flatnonzero(~masks[step % num_envs])[0]
        _, rewards, terminated, truncated, _ = venv.step(actions)
        for i, env in enumerate(envs):
            _, r, term, trunc, info = env.step(actions[i])
            assert (r, term, trunc) == (rewards[i], terminated[i], truncated[i])
            if term or trunc:
                endings["illegal" if info.get("illegal_action") else
                        "game" if term else "cap"] += 1
                env.reset()
    assert endings["illegal"] > 0
    assert (endings["cap"] > 0) == (max_steps is not None)
    if kind in ("rule-based", "network"):  # random and first-legal ones make long games
        assert endings["game"] > 0


def test_batched_network_opponents_decide_as_their_act() -> None:
    """The vector env's seats wait for one forward pass per network (``batched``); the single
    env's ask each opponent's ``act``: the same actions, so the same episodes."""
    rules = Rules(num_players=2)

    def seats(batched: bool) -> list[LearnerSeat]:
        out = [LearnerSeat(rules, PPOAgent(POLICY, seed=i, deterministic=False), None,
                           "win", -1.0, 40, batched=batched) for i in range(4)]
        for i, seat in enumerate(out):
            seat.start(100 + i)
        learner.deal(out)
        return out

    worlds = [seats(False), seats(True)]
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert [state(s) for s in worlds[0]] == [state(s) for s in worlds[1]]
        actions = [int(rng.choice(s.game.legal_action_ids())) if not s.over else A.DRAW
                   for s in worlds[0]]
        for world in worlds:
            going = [(s, a) for s, a in zip(world, actions) if not s.over]
            learner.step([s for s, _ in going], [a for _, a in going])
    assert sum(s.over for s in worlds[0]) > 0
